import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsRouter } from './docs.js';

let base = '';
let close: () => void = () => undefined;
beforeAll(async () => {
  const server = express().use(docsRouter()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close());

describe('docs — the API reference page', () => {
  it('docs — /docs is the page, and the swagger-ui assets it loads are served from the package', async () => {
    const page = await fetch(`${base}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    for (const [asset, type] of [
      ['swagger-ui-bundle.js', 'javascript'],
      ['swagger-ui.css', 'text/css'],
    ] as const) {
      const res = await fetch(`${base}/docs/assets/${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get('content-type'), asset).toContain(type);
      expect((await res.arrayBuffer()).byteLength, asset).toBeGreaterThan(10_000);
    }
    const init = await fetch(`${base}/docs/init.js`);
    expect(await init.text()).toContain("url: '/openapi.json'");
    expect((await fetch(`${base}/docs/assets/`)).status, 'no directory index').toBe(404);
  });
});

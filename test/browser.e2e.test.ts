import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';

/** Debian's package (.ci/run installs it); the suite runs wherever it is installed. */
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A web app's page: what matters is the origin it is served from. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end('<!doctype html><html><head><meta charset="utf-8"><title>app</title></head><body><p>app</p></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.runIf(existsSync(CHROMIUM))('browser — a single-page app in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let allowed: Awaited<ReturnType<typeof pageServer>>;
  let other: Awaited<ReturnType<typeof pageServer>>;

  beforeAll(async () => {
    [allowed, other] = await Promise.all([pageServer(), pageServer()]);
    [stack, browser] = await Promise.all([startStack({ gatewayEnv: { CORS_ORIGINS: allowed.origin } }), chromium.launch({ executablePath: CHROMIUM, args: FLAGS })]);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    allowed?.server.close();
    other?.server.close();
  });

  it('browser — an allowed origin uploads with fetch + FormData and downloads through a temporary link in an <a href>', async () => {
    const u = await stack.user();
    const context = await browser.newContext({ acceptDownloads: true });
    try {
      const page = await context.newPage();
      await page.goto(allowed.origin);
      const uploaded = await page.evaluate(
        async ({ api, token }) => {
          const form = new FormData();
          form.append('path', '/files/web/');
          form.append('file', new File(['bonjour, résumé\n'], 'résumé "final".txt', { type: 'text/plain' }));
          const res = await fetch(`${api}/v1/agent/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
          return { status: res.status, body: (await res.json()) as { path: string }, remaining: res.headers.get('ratelimit-remaining'), requestId: res.headers.get('x-request-id') };
        },
        { api: stack.url, token: u.token },
      );
      expect(uploaded.status).toBe(200);
      // The browser wrote `"` as %22 in the part header (WHATWG); the name arrives whole.
      expect(uploaded.body.path).toBe('/files/web/résumé "final".txt');
      expect(Number(uploaded.remaining)).toBeGreaterThan(0); // exposed to the script
      expect(uploaded.requestId).toBeTruthy();

      const link = await page.evaluate(
        async ({ api, token, path }) => {
          const res = await fetch(`${api}/v1/agent/files/links`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ path, expiresIn: 300 }) });
          return { status: res.status, body: (await res.json()) as { url: string } };
        },
        { api: stack.url, token: u.token, path: uploaded.body.path },
      );
      expect(link.status).toBe(201);
      // The page keeps its URL (and origin); the link needs no token, so a plain anchor works.
      await page.setContent(`<!doctype html><a id="download" href="${link.body.url}">download</a>`);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
      // The UTF-8 name from filename*, as Chromium saves it (it replaces `"` in file names with `_`).
      expect(download.suggestedFilename()).toBe('résumé _final_.txt');
      expect(await readFile((await download.path())!, 'utf8')).toBe('bonjour, résumé\n');
    } finally {
      await context.close();
    }
  });

  it('browser — a page from an origin not in CORS_ORIGINS is refused by the browser', async () => {
    const u = await stack.user();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(other.origin);
      const outcome = await page.evaluate(
        async ({ api, token }) => {
          try {
            const res = await fetch(`${api}/v1/agent/projects`, { headers: { authorization: `Bearer ${token}` } });
            return `answered ${res.status}`;
          } catch (err) {
            return `refused: ${(err as Error).name}`;
          }
        },
        { api: stack.url, token: u.token },
      );
      expect(outcome).toBe('refused: TypeError');
      // And the request never reached a route: no project list was served to that user.
      expect(stack.logsOf('gateway').some((l) => l.path === '/v1/agent/projects' && l.status === 200 && l.method === 'GET')).toBe(false);
    } finally {
      await context.close();
    }
  });
});

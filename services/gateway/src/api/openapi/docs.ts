import { createRequire } from 'node:module';
import express, { Router } from 'express';

const require = createRequire(import.meta.url);
// The package's own entry evaluates swagger-ui's 1.5 MB browser bundle in Node (~0.5 s of CPU at
// every gateway start) to hand out this path; its absolute-path module gives the path alone.
const swaggerUiDir = (require('swagger-ui-dist/absolute-path.js') as () => string)();

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Workspace API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="api"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body></html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#api', deepLinking: true });`;

/** The API reference at /docs, rendered by swagger-ui from the npm package (no CDN). */
export function docsRouter(): Router {
  const router = Router();
  router.get('/docs', (_req, res) => void res.type('html').send(PAGE));
  router.get('/docs/init.js', (_req, res) => void res.type('application/javascript').send(INIT));
  router.use('/docs/assets', express.static(swaggerUiDir, { index: false, maxAge: '1h' }));
  return router;
}

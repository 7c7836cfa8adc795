/**
 * The interactive API reference at `/docs`: Swagger UI's browser bundle (swagger-ui-dist)
 * rendering the served OpenAPI document (`GET /v1/openapi.json`), from this server only.
 *
 * - The renderer shows the product and nothing of its vendor: no top bar, no sign-up or demo
 *   offer (Swagger UI's `BaseLayout`, without the standalone preset's top bar). Its "Try it out"
 *   calls this origin, with the key the reader types under "Authorize".
 * - The two files (swagger-ui-bundle.js, swagger-ui.css) are copied to dist/api-reference/ by
 *   `npm run build` (scripts/copy-api-reference.ts), so an installation needs no renderer package
 *   at run time; a checkout that has not been built serves them from node_modules.
 * - Nothing comes from another host: the online spec validator (validator.swagger.io, whose
 *   badge Swagger UI loads by default) is turned off in /docs/init.js.
 * - The dashboard's CSP (security.ts) applies, with inline styles allowed on this page only
 *   (DOCS_CONTENT_SECURITY_POLICY; docs/security.md). No inline script.
 * - `/docs/api.md` gives docs/api.md as text, so that the document's "See docs/api.md" is a link
 *   that works on any installation.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { CONTENT_SECURITY_POLICY } from './security.js';

export const DOCS_PATH = '/docs';

/** The renderer's files the page loads, as named in swagger-ui-dist and in dist/api-reference/. */
export const RENDERER_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css'] as const;

/** dist/api-reference/ of this package, from src/dashboard (tsx) and dist/dashboard alike. */
export const BUILT_DIR = fileURLToPath(new URL('../../dist/api-reference/', import.meta.url));

/** docs/api.md of this package (the package ships docs/), from src/dashboard and dist/dashboard. */
const API_GUIDE = fileURLToPath(new URL('../../docs/api.md', import.meta.url));

const hasAll = (dir: string): boolean => RENDERER_FILES.every((file) => existsSync(join(dir, file)));

/** swagger-ui-dist's folder in node_modules (a development dependency), or null. */
export function installedRenderer(): string | null {
  try {
    const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    return hasAll(dir) ? dir : null;
  } catch {
    return null;
  }
}

const CONFIGURATION = {
  url: '/v1/openapi.json',
  dom_id: '#reference',
  // The page with the operations only: the standalone preset's top bar is not loaded.
  layout: 'BaseLayout',
  deepLinking: true,
  // No badge from validator.swagger.io: nothing is asked of another host.
  validatorUrl: null,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  persistAuthorization: false,
};

/**
 * /docs/init.js, a file since the CSP allows no inline script; it runs once the document, and so
 * the bundle before it, is in.
 */
const INIT_SCRIPT =
  `document.addEventListener('DOMContentLoaded', function () {\n` +
  `  window.ui = SwaggerUIBundle(Object.assign(${JSON.stringify(CONFIGURATION)}, {\n` +
  `    presets: [SwaggerUIBundle.presets.apis],\n` +
  `  }));\n` +
  `});\n`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>API reference · mailverdict</title>
    <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
    <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css" />
  </head>
  <body>
    <main id="reference"></main>
    <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
    <script src="${DOCS_PATH}/init.js"></script>
  </body>
</html>
`;

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * The dashboard's CSP with `style-src 'self' 'unsafe-inline'` (docs/security.md): Swagger UI sets
 * style attributes from its own script (its collapsing sections, the syntax highlighter). Scripts
 * stay `'self'` only, and the page shows nothing but this server's own OpenAPI document, so there
 * is no markup for an attacker to style. Tested in Chromium: no other directive is needed
 * (test/e2e/api-reference.test.ts).
 */
export const DOCS_CONTENT_SECURITY_POLICY = Object.entries({
  ...CONTENT_SECURITY_POLICY,
  styleSrc: [...CONTENT_SECURITY_POLICY.styleSrc, "'unsafe-inline'"],
})
  .map(([name, values]) => `${kebab(name)} ${values.join(' ')}`)
  .join(';');

const NOT_BUILT =
  'The API reference is not built in this installation: run `npm run build` (it writes ' +
  'dist/api-reference/). The OpenAPI document itself is at /v1/openapi.json.\n';

/**
 * `/docs`, its start script, the renderer's two files from `dir`, and `/docs/api.md`, in the
 * dashboard's scope (its headers and CSP).
 */
export function apiReferencePlugin(dir: string | null = hasAll(BUILT_DIR) ? BUILT_DIR : installedRenderer()) {
  return async (app: FastifyInstance): Promise<void> => {
    const options = { schema: { hide: true } };
    app.get(DOCS_PATH, options, async (_request, reply) => {
      if (dir === null)
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(NOT_BUILT);
      return reply
        .header('content-security-policy', DOCS_CONTENT_SECURITY_POLICY)
        .header('cache-control', 'no-cache')
        .type('text/html; charset=utf-8')
        .send(PAGE);
    });
    app.get(`${DOCS_PATH}/init.js`, options, async (_request, reply) =>
      reply.header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(INIT_SCRIPT),
    );
    // Only reply.sendFile (ETag, Last-Modified): the names are not hashed, so they are revalidated.
    // preCompressed: the .gz copies the build writes, to browsers that accept gzip.
    // As text, which every browser shows (text/markdown is offered as a download).
    app.get(`${DOCS_PATH}/api.md`, options, async (_request, reply) =>
      reply
        .header('cache-control', 'no-cache')
        .type('text/plain; charset=utf-8')
        .send(await readFile(API_GUIDE, 'utf8')),
    );
    if (dir === null) return;
    await app.register(fastifyStatic, { root: dir, serve: false, index: false, preCompressed: true });
    for (const file of RENDERER_FILES)
      app.get(`${DOCS_PATH}/${file}`, options, async (_request, reply) =>
        reply.header('cache-control', 'no-cache').sendFile(file, dir, { cacheControl: false }),
      );
  };
}

/**
 * The interactive API reference at `/docs`: Scalar's standalone bundle (@scalar/api-reference)
 * rendering the served OpenAPI document (`GET /v1/openapi.json`), from this server only.
 *
 * - The bundle is copied to dist/api-reference/scalar.js by `npm run build`
 *   (scripts/copy-api-reference.ts), so an installation needs no Scalar package at run time; a
 *   checkout that has not been built serves it from node_modules.
 * - Nothing comes from another host: Scalar's default fonts (fonts.scalar.com), telemetry, AI
 *   agent and request proxy are turned off in /docs/init.js; "Test request" calls this origin.
 * - The dashboard's CSP (security.ts) applies, with inline styles allowed on this page only
 *   (DOCS_CONTENT_SECURITY_POLICY; docs/security.md). No inline script.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { CONTENT_SECURITY_POLICY } from './security.js';

export const DOCS_PATH = '/docs';

/** dist/api-reference/scalar.js of this package, from src/dashboard (tsx) and dist/dashboard alike. */
export const BUILT_BUNDLE = fileURLToPath(new URL('../../dist/api-reference/scalar.js', import.meta.url));

/** Scalar's standalone bundle in node_modules (a development dependency), or null. */
export function installedBundle(): string | null {
  try {
    const entry = createRequire(import.meta.url).resolve('@scalar/api-reference');
    const bundle = join(dirname(entry), 'browser', 'standalone.js');
    return existsSync(bundle) ? bundle : null;
  } catch {
    return null;
  }
}

const CONFIGURATION = {
  url: '/v1/openapi.json',
  withDefaultFonts: false,
  defaultOpenAllTags: true,
  telemetry: false,
  agent: { disabled: true },
};

/**
 * /docs/init.js, a file since the CSP allows no inline script. It runs before the bundle: Zod
 * (inside Scalar) probes for eval with `Function('')` unless told to run without it, and that
 * probe is a CSP violation under `script-src 'self'`; `jitless` is Zod's own setting for pages
 * that forbid eval. Scalar then starts once the document (and so the bundle after it) is in.
 */
const INIT_SCRIPT =
  `globalThis.__zod_globalConfig = Object.assign(globalThis.__zod_globalConfig || {}, { jitless: true });\n` +
  `document.addEventListener('DOMContentLoaded', function () {\n` +
  `  Scalar.createApiReference('#reference', ${JSON.stringify(CONFIGURATION)});\n` +
  `});\n`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>API reference · mailverdict</title>
    <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
  </head>
  <body>
    <main id="reference"></main>
    <script src="${DOCS_PATH}/init.js"></script>
    <script src="${DOCS_PATH}/scalar.js"></script>
  </body>
</html>
`;

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * The dashboard's CSP with `style-src 'self' 'unsafe-inline'` (docs/security.md): Scalar inserts
 * <style> elements (its theme and toasts, besides the stylesheet that could take a nonce) and sets
 * style attributes, all from its own script. Scripts stay `'self'` only, and the page shows
 * nothing but this server's own OpenAPI document, so there is no markup for an attacker to
 * style. Tested in Chromium: no other directive is needed (test/e2e/api-reference.test.ts).
 */
export const DOCS_CONTENT_SECURITY_POLICY = Object.entries({
  ...CONTENT_SECURITY_POLICY,
  styleSrc: [...CONTENT_SECURITY_POLICY.styleSrc, "'unsafe-inline'"],
})
  .map(([name, values]) => `${kebab(name)} ${values.join(' ')}`)
  .join(';');

const NOT_BUILT =
  'The API reference is not built in this installation: run `npm run build` (it writes ' +
  'dist/api-reference/scalar.js). The OpenAPI document itself is at /v1/openapi.json.\n';

/** `/docs`, `/docs/scalar.js` and `/docs/init.js`, in the dashboard's scope (its headers and CSP). */
export function apiReferencePlugin(
  bundle: string | null = existsSync(BUILT_BUNDLE) ? BUILT_BUNDLE : installedBundle(),
) {
  return async (app: FastifyInstance): Promise<void> => {
    const options = { schema: { hide: true } };
    app.get(DOCS_PATH, options, async (_request, reply) => {
      if (bundle === null)
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
    if (bundle !== null) {
      // Only reply.sendFile (ETag, Last-Modified): the name is not hashed, so it is revalidated.
      // preCompressed: scalar.js.gz, written by the build, to browsers that accept gzip.
      await app.register(fastifyStatic, {
        root: dirname(bundle),
        serve: false,
        index: false,
        preCompressed: true,
      });
      app.get(`${DOCS_PATH}/scalar.js`, options, async (_request, reply) =>
        reply.header('cache-control', 'no-cache').sendFile(basename(bundle), { cacheControl: false }),
      );
    }
  };
}

/**
 * The dashboard's pages: the built app (dist/web, Vite's output) at `/`. A GET of a file there
 * serves it (hashed files under /assets/ cached for a year, immutable; everything else
 * revalidated); any other GET outside the API's paths answers index.html, so that the app's
 * own routes (/keys, /lists/job_…) work on a reload. Without a build, `/` says how to make one.
 */
import { existsSync, statSync } from 'node:fs';
import { join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../http/errors.js';
import { AppError } from '../errors.js';
import { DASHBOARD_API } from './contract.js';

/** dist/web of this package, from src/dashboard (tsx) and dist/dashboard (built) alike. */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../dist/web', import.meta.url));

/** Paths the v1 API and operations own: an unknown one there is the API's 404, never the app. */
const API_PATHS = ['/v1', '/hooks', '/healthz', '/readyz', '/metrics'];

const NOT_BUILT =
  'The mailverdict dashboard is not built in this installation.\n' +
  'Run `npm run build` (it writes dist/web), then restart `mailverdict serve`.\n' +
  'The HTTP API under /v1 works without it.\n';

function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** The file under `root` a URL path names, or null (not a file, or outside the root). */
function fileFor(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const relative = normalize(decoded).replace(/^[/\\]+/, '');
  if (relative === '' || relative.split(/[/\\]/).includes('..')) return null;
  const full = join(root, relative);
  if (!full.startsWith(root + sep)) return null;
  try {
    return statSync(full).isFile() ? relative : null;
  } catch {
    return null;
  }
}

export function pagesPlugin(webDir: string) {
  const root = normalize(webDir);
  return async (app: FastifyInstance): Promise<void> => {
    // Only reply.sendFile (ETag, Last-Modified, ranges, types); the routing is ours, below.
    await app.register(fastifyStatic, { root, serve: false, index: false, suppressWarning: true });

    const maxParamLength = app.initialConfig.maxParamLength ?? 100;
    const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const path = request.url.split('?')[0]!;
      if (under(path, DASHBOARD_API)) throw new AppError('not_found', `no route ${request.method} ${path}`);
      if (API_PATHS.some((p) => under(path, p))) {
        // The router passes over a parametric route whose segment is too long and lands here:
        // answer what it answers when nothing else matches (api/errors.ts frameworkErrorHandler).
        if (path.split('/').some((segment) => segment.length > maxParamLength))
          return sendError(request, reply, 'uri_too_long', 'a path segment of the URL is too long');
        return sendError(request, reply, 'not_found', `no route ${request.method} ${path}`);
      }
      const file = fileFor(root, path);
      if (file !== null && file.startsWith(`assets${sep}`))
        return reply.sendFile(file, { maxAge: '365d', immutable: true, cacheControl: true });
      // A missing script or stylesheet is a 404, not the page (which a browser would try to run).
      if (under(path, '/assets')) throw new AppError('not_found', `no file ${path}`);
      if (file !== null && file !== 'index.html') {
        void reply.header('cache-control', 'no-cache');
        return reply.sendFile(file, { cacheControl: false });
      }
      if (!existsSync(join(root, 'index.html')))
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(NOT_BUILT);
      // The app's own route (or `/`): the page, never cached, so a new build is picked up at once.
      void reply.header('cache-control', 'no-cache');
      return reply.type('text/html; charset=utf-8').sendFile('index.html', { cacheControl: false });
    };
    app.get('/', { schema: { hide: true } }, serve);
    app.get('/*', { schema: { hide: true } }, serve);
  };
}

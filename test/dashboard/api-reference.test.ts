/**
 * /docs on the server: the page, its start script and the renderer's files (Swagger UI), the
 * dashboard's headers with inline styles allowed on that page only, docs/api.md as text, and a
 * short answer when the renderer is missing.
 * (Rendering, requests and CSP in a browser: test/e2e/api-reference.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { apiReferencePlugin, installedRenderer } from '../../src/dashboard/api-reference.js';
import { createDashboardHarness, type DashboardHarness } from '../kit/dashboard-kit.js';

const DOCS_CSP =
  "default-src 'self';script-src 'self';style-src 'self' 'unsafe-inline';img-src 'self' data:;connect-src 'self';frame-ancestors 'none';base-uri 'none';form-action 'self';object-src 'none'";

let h: DashboardHarness | undefined;
const harness = async () => (h ??= await createDashboardHarness());
afterAll(async () => {
  await h?.close();
});

describe('GET /docs', { timeout: 60_000 }, () => {
  it("answers the page with the dashboard's headers, inline styles allowed", async () => {
    const res = await (await harness()).inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(DOCS_CSP);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.body).toContain('<script src="/docs/init.js"></script>');
    expect(res.body).toContain('<script src="/docs/swagger-ui-bundle.js"></script>');
    expect(res.body).toContain('<link rel="stylesheet" href="/docs/swagger-ui.css" />');
    expect(res.body).not.toMatch(/<script>|<style|https?:\/\//);
  });

  it('gives the start script: the OpenAPI document, no top bar, no online validator', async () => {
    const res = await (await harness()).inject({ method: 'GET', url: '/docs/init.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.body).toContain('"url":"/v1/openapi.json"');
    expect(res.body).toContain('"layout":"BaseLayout"');
    expect(res.body).toContain('"validatorUrl":null');
    expect(res.body).not.toContain('StandalonePreset');
  });

  it("gives the renderer's script and stylesheet, revalidated", async () => {
    expect(installedRenderer()).not.toBeNull();
    const script = await (await harness()).inject({ method: 'GET', url: '/docs/swagger-ui-bundle.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(script.headers['cache-control']).toBe('no-cache');
    expect(script.headers.etag).toBeDefined();
    expect(script.body).toContain('SwaggerUIBundle');
    const style = await (await harness()).inject({ method: 'GET', url: '/docs/swagger-ui.css' });
    expect(style.statusCode).toBe(200);
    expect(style.headers['content-type']).toMatch(/^text\/css/);
  });

  it("gives docs/api.md as text, the link of the document's description", async () => {
    const res = await (await harness()).inject({ method: 'GET', url: '/docs/api.md' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toMatch(/^# /);
    const openapi = await (await harness()).inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(openapi.json<{ info: { description: string } }>().info.description).toContain(
      '[docs/api.md](/docs/api.md)',
    );
  });

  it('says how to build it when the bundle is missing', async () => {
    const app = Fastify();
    await app.register(apiReferencePlugin(null));
    const res = await app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build');
    await app.close();
  });

  it('gives the gzipped copy the build writes beside the bundle to a browser that accepts gzip', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailverdict-docs-'));
    const source = 'window.SwaggerUIBundle = {};\n'.repeat(100);
    writeFileSync(join(dir, 'swagger-ui-bundle.js'), source);
    writeFileSync(join(dir, 'swagger-ui-bundle.js.gz'), gzipSync(source));
    writeFileSync(join(dir, 'swagger-ui.css'), 'main{}\n');
    const app = Fastify();
    await app.register(apiReferencePlugin(dir));
    const gzipped = await app.inject({
      method: 'GET',
      url: '/docs/swagger-ui-bundle.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    const plain = await app.inject({ method: 'GET', url: '/docs/swagger-ui-bundle.js' });
    await app.close();
    rmSync(dir, { recursive: true, force: true });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.rawPayload.length).toBeLessThan(source.length / 10);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(source);
  });
});

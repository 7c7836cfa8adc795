/**
 * /docs on the server: the page, its start script and Scalar's bundle, the dashboard's headers
 * with inline styles allowed on that page only, and a short answer when the bundle is missing.
 * (Rendering, requests and CSP in a browser: test/e2e/api-reference.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { apiReferencePlugin, installedBundle } from '../../src/dashboard/api-reference.js';
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
    expect(res.body).toContain('<script src="/docs/scalar.js"></script>');
    expect(res.body).not.toMatch(/<script>|<style|https?:\/\//);
  });

  it('gives the start script, with the OpenAPI document, fonts and telemetry off', async () => {
    const res = await (await harness()).inject({ method: 'GET', url: '/docs/init.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.body).toContain('"url":"/v1/openapi.json"');
    expect(res.body).toContain('"withDefaultFonts":false');
    expect(res.body).toContain('"telemetry":false');
  });

  it("gives Scalar's bundle, revalidated", async () => {
    expect(installedBundle()).not.toBeNull();
    const res = await (await harness()).inject({ method: 'GET', url: '/docs/scalar.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.etag).toBeDefined();
    expect(res.body).toContain('createApiReference');
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
    const source = 'window.Scalar = {};\n'.repeat(100);
    writeFileSync(join(dir, 'scalar.js'), source);
    writeFileSync(join(dir, 'scalar.js.gz'), gzipSync(source));
    const app = Fastify();
    await app.register(apiReferencePlugin(join(dir, 'scalar.js')));
    const gzipped = await app.inject({
      method: 'GET',
      url: '/docs/scalar.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    const plain = await app.inject({ method: 'GET', url: '/docs/scalar.js' });
    await app.close();
    rmSync(dir, { recursive: true, force: true });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.rawPayload.length).toBeLessThan(source.length / 10);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(source);
  });
});

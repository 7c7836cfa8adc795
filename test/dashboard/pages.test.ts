/**
 * The pages: the built app served at `/` with the SPA fallback, cache rules for hashed assets and
 * the page, the security headers on every dashboard response, the API's paths kept as the API's,
 * and a short page instead of a crash when the app is not built.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { API, createDashboardHarness, type DashboardHarness } from '../kit/dashboard-kit.js';

/** Each test hashes passwords with scrypt (100-200 ms idle, seconds on a loaded 2-core machine). */
const SLOW = { timeout: 60_000 };

const INDEX =
  '<!doctype html><html><head><script type="module" src="/assets/app-3f9a.js"></script></head><body></body></html>';
const CSP =
  "default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';frame-ancestors 'none';base-uri 'none';form-action 'self';object-src 'none'";

let webDir: string;
let h: DashboardHarness | undefined;
beforeAll(() => {
  webDir = mkdtempSync(join(tmpdir(), 'mailverdict-web-'));
  mkdirSync(join(webDir, 'assets'));
  writeFileSync(join(webDir, 'index.html'), INDEX);
  writeFileSync(join(webDir, 'assets', 'app-3f9a.js'), 'console.log("app");\n');
  writeFileSync(join(webDir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(tmpdir(), 'mailverdict-outside.txt'), 'outside the web directory');
});
afterAll(() => {
  rmSync(webDir, { recursive: true, force: true });
});
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function get(url: string, dir = webDir) {
  h ??= await createDashboardHarness({ webDir: dir });
  return h.inject({ method: 'GET', url });
}

function expectSecurityHeaders(headers: Record<string, unknown>): void {
  expect(headers['content-security-policy']).toBe(CSP);
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');
}

describe('dashboard pages', SLOW, () => {
  it('serves the app at / with the security headers, never cached', async () => {
    const res = await get('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toBe(INDEX);
    expect(res.headers['cache-control']).toBe('no-cache');
    expectSecurityHeaders(res.headers);
  });

  it('answers the app for its own routes, so a reload works', async () => {
    for (const path of [
      '/keys',
      '/lists',
      '/lists/job_abc123',
      '/outcomes',
      '/sign-in',
      '/accept-invite',
      '/settings?tab=members',
    ]) {
      const res = await get(path);
      expect([path, res.statusCode, res.body]).toEqual([path, 200, INDEX]);
    }
  });

  it('serves hashed assets cached for a year, immutable', async () => {
    const res = await get('/assets/app-3f9a.js');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expectSecurityHeaders(res.headers);
  });

  it('serves other files revalidated, and a missing asset as 404 rather than the page', async () => {
    const icon = await get('/favicon.svg');
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
    expect((await get('/assets/gone-1234.js')).statusCode).toBe(404);
  });

  it('never serves a file outside its directory', async () => {
    for (const path of [
      '/../mailverdict-outside.txt',
      '/%2e%2e/mailverdict-outside.txt',
      '/assets/..%2f..%2fmailverdict-outside.txt',
    ]) {
      const res = await get(path);
      expect(res.body).not.toContain('outside the web directory');
    }
  });

  it('keeps the API’s paths: an unknown v1 path is v1’s 404, health stays, dashboard routes get their envelope', async () => {
    const v1 = await get('/v1/nothing-here');
    expect(v1.statusCode).toBe(404);
    expect(v1.json()).toMatchObject({ error: 'not_found', message: 'no route GET /v1/nothing-here' });
    expect((await get('/healthz')).json()).toMatchObject({ status: 'ok' });
    // Without a session, an unknown dashboard route answers as every route that needs one does
    // (an operator route among them: issue 26); test/dashboard/sign-in-hardening.test.ts has the 404.
    const unknown = await get(`${API}/nothing-here`);
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toMatchObject({ error: 'unauthenticated' });
    expectSecurityHeaders(unknown.headers);
  });

  it('puts the security headers on every dashboard API response, errors included', async () => {
    const res = await get(`${API}/session`);
    expect(res.statusCode).toBe(401);
    expectSecurityHeaders(res.headers);
  });

  it('leaves v1 responses as they were: no dashboard headers there', async () => {
    const res = await get('/healthz');
    expect(res.headers['content-security-policy']).toBeUndefined();
    const verify = await h!.v1('POST', '/v1/verify', h!.testKey, { email: 'ann@valid.example.com' });
    expect(verify.headers['content-security-policy']).toBeUndefined();
    expect(verify.headers['set-cookie']).toBeUndefined();
  });

  it('says how to build the app when it is not built, and the API still answers', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'mailverdict-noweb-'));
    try {
      const res = await get('/', join(empty, 'web'));
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.body).toContain('npm run build');
      expect((await get('/keys', join(empty, 'web'))).body).toContain('npm run build');
      expect((await get('/healthz', join(empty, 'web'))).statusCode).toBe(200);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

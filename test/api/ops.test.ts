import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../scripts/openapi-document.js';
import { buildApp } from '../../src/api/app.js';
import { openDatabase } from '../../src/store/db.js';
import { sql } from 'kysely';
import { createHarness, type Harness } from '../kit/api-harness.js';

describe('health, metrics and the OpenAPI document', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('GET /healthz answers 200 without a key', async () => {
    const res = await h.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok' });
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('GET /readyz answers 200 while the store answers', async () => {
    const res = await h.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('ok');
  });

  it('GET /readyz answers 503 when the store does not answer', async () => {
    const db = openDatabase({ dataDir: h.dir });
    await sql`select 1`.execute(db);
    await db.destroy(); // closes the SQLite connection under Kysely
    const app = buildApp({ ...h.runtime.ctx, db });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ status: 'unavailable', request_id: res.headers['x-request-id'] });
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('GET /metrics counts requests by route and status, and verdicts', async () => {
    await h.verify(h.testKey, { email: 'a@valid.example.com' });
    await h.verify(h.testKey, { email: 'a@invalid.example.com' });
    await h.verify('svc_test_nope', { email: 'a@valid.example.com' });
    const res = await h.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toMatch(
      /^mailverdict_http_requests_total\{method="POST",route="\/v1\/verify",status="200"\} 2$/m,
    );
    expect(res.body).toMatch(
      /^mailverdict_http_requests_total\{method="POST",route="\/v1\/verify",status="401"\} 1$/m,
    );
    expect(res.body).toMatch(/^mailverdict_verifications_total\{status="deliverable",kind="test"\} 1$/m);
    expect(res.body).toMatch(/^mailverdict_verifications_total\{status="undeliverable",kind="test"\} 1$/m);
    expect(res.body).toMatch(/^mailverdict_engine_latency_seconds_count\{kind="test"\} 2$/m);
    expect(res.body).toContain('mailverdict_quota_refusals_total 0');
  });

  it('serves the OpenAPI 3.1 document with every v1 route, its errors and the bearer scheme', async () => {
    const res = await h.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    const verify = doc.paths['/v1/verify'].post;
    expect(Object.keys(verify.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '413',
      '415',
      '422',
      '429',
      '500',
    ]);
    expect(verify.requestBody.content['application/json'].schema.required).toEqual(['email']);
    expect(Object.keys(doc.paths['/v1/account/usage'].get.responses).sort()).toEqual([
      '200',
      '401',
      '403',
      '429',
      '500',
    ]);
    expect(doc.paths['/healthz']).toBeUndefined();
  });

  it('names every operation with a stable operationId, and says its licence and server', async () => {
    const doc = (await h.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const ids: Record<string, string> = {};
    for (const [path, item] of Object.entries(
      doc.paths as Record<string, Record<string, { operationId?: string }>>,
    ))
      for (const [method, operation] of Object.entries(item))
        ids[`${method.toUpperCase()} ${path}`] = operation.operationId!;
    // Generated clients (and the MCP tools) are named after these: renaming one breaks them.
    expect(ids).toEqual({
      'POST /v1/verify': 'verifyEmail',
      'OPTIONS /v1/verify': 'preflightVerify',
      'GET /v1/account/usage': 'getUsage',
      'POST /v1/verify/batch': 'submitBatch',
      'GET /v1/jobs': 'listJobs',
      'GET /v1/jobs/{id}': 'getJob',
      'DELETE /v1/jobs/{id}': 'cancelJob',
      'GET /v1/jobs/{id}/results': 'getJobResults',
      'POST /v1/outcomes': 'reportOutcomes',
      'DELETE /v1/outcomes': 'eraseOutcomes',
      'GET /v1/filters': 'listFilters',
      'POST /v1/filters': 'addFilter',
      'DELETE /v1/filters/{id}': 'deleteFilter',
      'GET /v1/outcome-sources': 'listOutcomeSources',
      'POST /v1/outcome-sources': 'createOutcomeSource',
      'DELETE /v1/outcome-sources/{id}': 'deleteOutcomeSource',
      'GET /v1/account/outcomes': 'getOutcomesReport',
    });
    expect(doc.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('docs/openapi.json is the document the code generates (run `npm run openapi` when this fails)', async () => {
    const committed = readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8');
    expect(JSON.parse(committed)).toEqual(await buildOpenApiDocument());
  });
});

describe('request logs', () => {
  it('log one line per request with its request id, and never the key or the address', async () => {
    const lines: string[] = [];
    const h = await createHarness({ logLines: lines });
    try {
      const res = await h.verify(h.testKey, { email: 'secret.person@valid.example.com' });
      await h.verify(h.testKey, { email: 'not an address' });
      await h.inject({
        method: 'GET',
        url: '/v1/account/usage',
        headers: { authorization: `Basic ${h.liveKey}` },
      });
      const text = lines.join('');
      expect(text).not.toContain(h.testKey.slice(9));
      expect(text).not.toContain(h.liveKey.slice(9));
      expect(text).not.toContain('secret.person');
      const entries = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((e) => e.msg === 'request');
      expect(entries).toHaveLength(3);
      expect(entries[0]).toMatchObject({
        request_id: res.headers['x-request-id'],
        route: '/v1/verify',
        status: 200,
      });
    } finally {
      await h.close();
    }
  });
});

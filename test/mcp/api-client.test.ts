/**
 * The MCP server's API client (src/mcp/api-client.ts) against scripted HTTP servers on loopback:
 * which refusals it tries again, what an error carries, and how a results page is read.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiCallError, createApiClient } from '../../src/mcp/api-client.js';

const KEY = 'svc_test_secretpartofthekey';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** A server whose n-th request (from 0) is answered by `answers[n]` (the last one from then on). */
async function scripted(
  answers: ((res: http.ServerResponse) => void)[],
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    req.resume();
    answers[Math.min(seen.length - 1, answers.length - 1)]!(res);
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: http.ServerResponse) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const refusal = (error: string, status: number, headers: Record<string, string> = {}) =>
  json(status, { error, message: `${error} happened`, request_id: 'req_1' }, headers);

async function failure(promise: Promise<unknown>): Promise<ApiCallError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiCallError);
  return err as ApiCallError;
}

describe('the MCP API client', () => {
  it('sends the key as a bearer token, and a batch with an Idempotency-Key', async () => {
    const { url, seen } = await scripted([json(202, { job_id: 'job_1' })]);
    const api = createApiClient({ url, apiKey: KEY });
    expect(await api.submitBatch({ emails: ['a@b.example'] })).toEqual({ job_id: 'job_1' });
    await api.submitBatch({ emails: ['a@b.example'] }, 'mine');
    expect(seen.map((s) => [s.method, s.url, s.headers.authorization, s.headers['content-type']])).toEqual([
      ['POST', '/v1/verify/batch', `Bearer ${KEY}`, 'application/json'],
      ['POST', '/v1/verify/batch', `Bearer ${KEY}`, 'application/json'],
    ]);
    expect(seen[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]!.headers['idempotency-key']).toBe('mine');
  });

  it('puts an address to erase in the query and a filter id in the path, encoded, with no body on a DELETE', async () => {
    const { url, seen } = await scripted([json(200, { ok: true })]);
    const api = createApiClient({ url, apiKey: KEY });
    await api.eraseOutcomes('jane+news&x=1@example.com');
    await api.deleteFilter('flt_a/../b');
    await api.addFilter({ action: 'block', match: 'tld', value: 'xyz' });
    await api.reportOutcomes({ events: [] });
    await api.listFilters();
    expect(seen.map((s) => [s.method, s.url, s.headers['content-type']])).toEqual([
      ['DELETE', '/v1/outcomes?email=jane%2Bnews%26x%3D1%40example.com', undefined],
      ['DELETE', '/v1/filters/flt_a%2F..%2Fb', undefined],
      ['POST', '/v1/filters', 'application/json'],
      ['POST', '/v1/outcomes', 'application/json'],
      ['GET', '/v1/filters', undefined],
    ]);
  });

  it('tries rate_limit_exceeded again after its Retry-After and answers the next attempt', async () => {
    const { url, seen } = await scripted([
      refusal('rate_limit_exceeded', 429, { 'retry-after': '0' }),
      json(200, { plan: 'free' }),
    ]);
    expect(await createApiClient({ url, apiKey: KEY }).usage()).toEqual({ plan: 'free' });
    expect(seen).toHaveLength(2);
  });

  it('answers quota_exceeded at once, with its code, message, status, request id and Retry-After', async () => {
    const { url, seen } = await scripted([refusal('quota_exceeded', 429, { 'retry-after': '3' })]);
    const err = await failure(createApiClient({ url, apiKey: KEY }).verify({ email: 'a@b.example' }));
    expect(err).toMatchObject({
      code: 'quota_exceeded',
      message: 'quota_exceeded happened',
      status: 429,
      requestId: 'req_1',
      retryAfter: 3,
    });
    expect(seen).toHaveLength(1);
  });

  it('does not wait longer than it may: a long Retry-After comes back as the error', async () => {
    const { url, seen } = await scripted([refusal('rate_limit_exceeded', 429, { 'retry-after': '60' })]);
    const err = await failure(createApiClient({ url, apiKey: KEY }).getJob('job_1'));
    expect(err).toMatchObject({ code: 'rate_limit_exceeded', retryAfter: 60 });
    expect(seen).toHaveLength(1);
  });

  it('stops after its retries', async () => {
    const { url, seen } = await scripted([refusal('service_unavailable', 503, { 'retry-after': '0' })]);
    const err = await failure(createApiClient({ url, apiKey: KEY, retries: 2 }).usage());
    expect(err.code).toBe('service_unavailable');
    expect(seen).toHaveLength(3);
  });

  it('names an answer without the error body http_<status>', async () => {
    const { url } = await scripted([
      (res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>'),
    ]);
    const err = await failure(createApiClient({ url, apiKey: KEY }).usage());
    expect(err.code).toBe('http_502');
    expect(err.message).toContain('no mailverdict error body');
  });

  it('answers connection_failed when nothing answers, without the key or credentials of the URL', async () => {
    const { url } = await scripted([json(200, {})]);
    const port = new URL(url).port;
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const err = await failure(
      createApiClient({ url: `http://user:pw@127.0.0.1:${port}`, apiKey: KEY }).usage(),
    );
    expect(err.code).toBe('connection_failed');
    expect(err.message).toContain(`http://127.0.0.1:${port}`);
    expect(err.message).not.toContain('pw');
    expect(err.message).not.toContain(KEY);
  });

  describe('a page of results', () => {
    const rows = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ index: i, email: `u${i}@b.example`, status: 'deliverable' }));
    /** The results document written in pieces of 50 rows, as the API streams it. */
    const streamed =
      (n: number, cut = false) =>
      (res: http.ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"job_id":"job_1","results":[');
        const all = rows(n);
        for (let i = 0; i < n; i += 50)
          res.write(
            all
              .slice(i, i + 50)
              .map((r) => JSON.stringify(r))
              .join(',') + (i + 50 < n ? ',' : ''),
          );
        if (cut) res.destroy();
        else res.end('],"request_id":"req_1"}');
      };

    it('holds the rows from the offset, and the next offset while more remain', async () => {
      const { url, seen } = await scripted([streamed(1000)]);
      const api = createApiClient({ url, apiKey: KEY });
      const first = await api.resultsPage('job_1', 0, 2);
      expect(first).toEqual({ job_id: 'job_1', offset: 0, rows: rows(2), next_offset: 2 });
      const middle = await api.resultsPage('job_1', 500, 3);
      expect(middle.rows.map((r) => r.index)).toEqual([500, 501, 502]);
      expect(middle.next_offset).toBe(503);
      const last = await api.resultsPage('job_1', 998, 5);
      expect(last.rows.map((r) => r.index)).toEqual([998, 999]);
      expect(last.next_offset).toBeNull();
      expect((await api.resultsPage('job_1', 1000, 5)).rows).toEqual([]);
      expect(seen[0]!.url).toBe('/v1/jobs/job_1/results?format=json');
    });

    it('refuses a document cut short rather than pass it for the last page', async () => {
      const { url } = await scripted([streamed(120, true)]);
      const err = await failure(createApiClient({ url, apiKey: KEY }).resultsPage('job_1', 100, 50));
      expect(err.code).toBe('connection_failed');
    });
  });
});

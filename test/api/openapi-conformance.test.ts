/**
 * The answers of a real `mailverdict serve`, over HTTP, against docs/openapi.json: every operation
 * of the document is called (successes and the errors a client can cause), and each answer's status
 * must be one its operation documents, its Content-Type one of that status's media types, its body
 * valid against that media type's schema and its documented headers valid against theirs. The
 * validator is @hyperjump/json-schema's OpenAPI 3.1 dialect, reading the committed document, so
 * what clients, SDK generators and the MCP tools are built from is what the server does. On SQLite,
 * and on PostgreSQL in CI's PostgreSQL pass (MAILVERDICT_TEST_STORE=postgres).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { validate } from '@hyperjump/json-schema/openapi-3-1';
import { BASIC } from '@hyperjump/json-schema/experimental';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli, spawnMailverdict, spawnServe, type Served } from '../kit/cli.js';
import { createTestSchema, TEST_SECRET_KEY } from '../kit/store-harness.js';
import { waitFor } from '../kit/wait-for.js';

const DOCUMENT_PATH = new URL('../../docs/openapi.json', import.meta.url);
const DOCUMENT_URI = pathToFileURL(DOCUMENT_PATH.pathname).href;

interface Operation {
  operationId: string;
  responses: Record<
    string,
    { content?: Record<string, { schema: unknown }>; headers?: Record<string, { schema: unknown }> }
  >;
}
const doc = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};

/** operationId -> its path template, method and JSON pointer into the document. */
const operations = new Map<string, { path: string; method: string; pointer: string; operation: Operation }>();
/** A JSON pointer segment, as it may stand in a URI fragment (`{id}` percent-encoded). */
const escape = (s: string) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'));
for (const [path, item] of Object.entries(doc.paths))
  for (const [method, operation] of Object.entries(item))
    operations.set(operation.operationId, {
      path,
      method: method.toUpperCase(),
      pointer: `/paths/${escape(path)}/${method}`,
      operation,
    });

/** What each call was: the operation, the status it got; every answer checked as it comes. */
const seen: { operationId: string; status: number }[] = [];

/** The problems of one answer against the document; empty when it conforms. */
async function problemsOf(
  operationId: string,
  status: number,
  headers: Headers,
  text: string,
): Promise<string[]> {
  const entry = operations.get(operationId)!;
  const documented = entry.operation.responses[String(status)];
  if (documented === undefined)
    return [`${operationId}: status ${status} is not documented (${text.slice(0, 200)})`];
  const problems: string[] = [];
  const responsePointer = `${entry.pointer}/responses/${status}`;
  const mediaTypes = Object.keys(documented.content ?? {});
  const contentType = (headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (mediaTypes.length === 0) {
    if (text !== '') problems.push(`${operationId} ${status}: a body where none is documented`);
  } else if (!mediaTypes.includes(contentType)) {
    problems.push(
      `${operationId} ${status}: Content-Type ${contentType}, documented: ${mediaTypes.join(', ')}`,
    );
  } else {
    const body: unknown = contentType === 'application/json' ? JSON.parse(text) : text;
    const schema = `${DOCUMENT_URI}#${responsePointer}/content/${escape(contentType)}/schema`;
    const output = (await validate(schema))(body as never, BASIC);
    if (!output.valid)
      problems.push(
        `${operationId} ${status}: body does not match the document: ${JSON.stringify(output.errors)}\n${text.slice(0, 500)}`,
      );
  }
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    const value = headers.get(name);
    if (value === null) continue;
    const type = (header.schema as { type?: string }).type;
    const typed = type === 'integer' || type === 'number' ? Number(value) : value;
    const schema = `${DOCUMENT_URI}#${responsePointer}/headers/${escape(name)}/schema`;
    if (!(await validate(schema))(typed as never).valid)
      problems.push(`${operationId} ${status}: header ${name}: "${value}" does not match its schema`);
  }
  return problems;
}

interface Call {
  key?: string;
  params?: Record<string, string>;
  query?: string;
  body?: unknown;
  /** A raw body (sent as is). */
  raw?: string;
  headers?: Record<string, string>;
}

let server: Served;
let dataDir: string;
/** The store's settings: SQLite in dataDir, or (MAILVERDICT_TEST_STORE=postgres) a schema of its own. */
let storeEnv: Record<string, string> = {};

/** Calls the operation on the real server and fails the test when the answer does not conform. */
async function call(operationId: string, c: Call = {}): Promise<{ status: number; json: () => unknown }> {
  const entry = operations.get(operationId);
  if (entry === undefined) throw new Error(`no operation ${operationId} in docs/openapi.json`);
  const path = entry.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(c.params![name]!));
  const headers: Record<string, string> = { ...c.headers };
  if (c.key !== undefined) headers.authorization = `Bearer ${c.key}`;
  let body: string | undefined = c.raw;
  if (c.body !== undefined) {
    body = JSON.stringify(c.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${server.url}${path}${c.query ?? ''}`, { method: entry.method, headers, body });
  const text = await res.text();
  seen.push({ operationId, status: res.status });
  expect(await problemsOf(operationId, res.status, res.headers, text)).toEqual([]);
  return { status: res.status, json: () => JSON.parse(text) as unknown };
}

/** `mailverdict <args> --data-dir <dir> --json` on the running server's store. */
async function cli(args: string[]): Promise<Record<string, unknown>> {
  const res = await runCli([...args, '--data-dir', dataDir, '--json'], cleanEnv(storeEnv));
  if (res.code !== 0) throw new Error(`mailverdict ${args.join(' ')} exited with ${res.code}: ${res.stderr}`);
  return JSON.parse(res.stdout) as Record<string, unknown>;
}

let testKey: string;
let liveKey: string;
/** A live key of an account with no quota left and one request a second, allowed only `verify`. */
let limitedKey: string;
/** A publishable test key for https://shop.example. */
let publishableKey: string;
const ORIGIN = 'https://shop.example';

describe('the real server against docs/openapi.json', () => {
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'mailverdict-conformance-'));
    if (process.env.MAILVERDICT_TEST_STORE === 'postgres')
      storeEnv = {
        MAILVERDICT_DATABASE_URL: (await createTestSchema()).url,
        MAILVERDICT_SECRET_KEY: TEST_SECRET_KEY,
      };
    server = await spawnServe(['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], {
      // A generous rate for the bootstrap account, so that only the limited account meets 429s.
      // No embedded worker: a job stays queued until the test starts `mailverdict worker`.
      env: cleanEnv({
        MAILVERDICT_LOG_LEVEL: 'warn',
        MAILVERDICT_EMBEDDED_WORKERS: 'false',
        MAILVERDICT_PLANS: '{"free":{"rate_limit_per_second":1000}}',
        ...storeEnv,
      }),
    });
    testKey = server.keys!.test_key;
    liveKey = server.keys!.live_key;
    const limited = await cli([
      'accounts',
      'create',
      '--email',
      'limited@shop.example',
      '--quota-limit',
      '0',
      '--rate-limit',
      '1',
    ]);
    limitedKey = (
      await cli(['keys', 'create', '--account', String(limited.id), '--kind', 'live', '--scopes', 'verify'])
    ).key as string;
    publishableKey = (
      await cli([
        'keys',
        'create',
        '--account',
        server.keys!.account_id,
        '--kind',
        'test',
        '--publishable',
        '--allowed-origin',
        ORIGIN,
      ])
    ).key as string;
  });

  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('verifyEmail: results of every kind, the reduced answer of a publishable key, and its refusals', async () => {
    for (const email of ['anna@valid.example.com', 'nobody@invalid.example.com', 'x@catchall.example.com'])
      expect((await call('verifyEmail', { key: testKey, body: { email } })).status).toBe(200);
    const full = await call('verifyEmail', {
      key: testKey,
      body: { email: 'anna@valid.example.com', include_checks: false, include_transcript: true },
    });
    expect(full.status).toBe(200);
    const reduced = await call('verifyEmail', {
      key: publishableKey,
      headers: { origin: ORIGIN },
      body: { email: 'anna@valid.example.com' },
    });
    expect(reduced.json()).not.toHaveProperty('checks');
    expect((await call('verifyEmail', { body: { email: 'a@b.example' } })).status).toBe(401);
    expect((await call('verifyEmail', { key: 'svc_live_nope', body: { email: 'a@b.example' } })).status).toBe(
      401,
    );
    expect(
      (
        await call('verifyEmail', {
          key: testKey,
          raw: '{"email":',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    expect(
      (await call('verifyEmail', { key: testKey, raw: 'email=a', headers: { 'content-type': 'text/plain' } }))
        .status,
    ).toBe(415);
    expect((await call('verifyEmail', { key: testKey, body: { timeout_ms: 5 } })).status).toBe(422);
    expect((await call('verifyEmail', { key: testKey, body: { email: 'x'.repeat(2_000_000) } })).status).toBe(
      413,
    );
    expect(
      (
        await call('verifyEmail', {
          key: publishableKey,
          headers: { origin: 'https://elsewhere.example' },
          body: { email: 'a@b.example' },
        })
      ).status,
    ).toBe(403);
  });

  it('verifyEmail: the quota and the rate limit of a live key (429 with Retry-After)', async () => {
    const codes: string[] = [];
    // One request a second: a burst meets rate_limit_exceeded within a few calls (bounded).
    for (let i = 0; i < 20 && !codes.includes('rate_limit_exceeded'); i++) {
      const res = await call('verifyEmail', { key: limitedKey, body: { email: 'anna@valid.example.com' } });
      codes.push((res.json() as { error: string }).error);
    }
    expect(codes[0]).toBe('quota_exceeded');
    expect(codes).toContain('rate_limit_exceeded');
  });

  it('preflightVerify: an allowed origin and another', async () => {
    const headers = { 'access-control-request-method': 'POST' };
    expect((await call('preflightVerify', { headers: { ...headers, origin: ORIGIN } })).status).toBe(204);
    expect(
      (await call('preflightVerify', { headers: { ...headers, origin: 'https://elsewhere.example' } }))
        .status,
    ).toBe(403);
  });

  it('getUsage: a key with the scope and one without', async () => {
    expect((await call('getUsage', { key: liveKey })).status).toBe(200);
    expect((await call('getUsage', { key: limitedKey })).status).toBe(403);
  });

  it('a batch job from submission to its results, its list, its cancellation and their refusals', async () => {
    const emails = ['anna@valid.example.com', 'nobody@invalid.example.com', 'not an address'];
    const idempotent = { 'idempotency-key': 'conformance-1' };
    const submitted = await call('submitBatch', { key: testKey, body: { emails }, headers: idempotent });
    expect(submitted.status).toBe(202);
    const jobId = (submitted.json() as { job_id: string }).job_id;
    expect((await call('submitBatch', { key: testKey, body: { emails }, headers: idempotent })).status).toBe(
      202,
    );
    const other = { emails: ['b@valid.example.com'] };
    expect((await call('submitBatch', { key: testKey, body: other, headers: idempotent })).status).toBe(422);
    expect((await call('submitBatch', { key: testKey, body: { emails: [] } })).status).toBe(422);
    expect((await call('submitBatch', { key: limitedKey, body: { emails } })).status).toBe(403);

    // Queued (no worker runs yet): no results, and it can be cancelled once.
    const queued = await call('submitBatch', { key: testKey, body: { emails } });
    const queuedId = (queued.json() as { job_id: string }).job_id;
    expect((await call('getJob', { key: testKey, params: { id: queuedId } })).status).toBe(200);
    expect((await call('getJobResults', { key: testKey, params: { id: queuedId } })).status).toBe(409);
    expect((await call('cancelJob', { key: testKey, params: { id: queuedId } })).status).toBe(200);
    expect((await call('cancelJob', { key: testKey, params: { id: queuedId } })).status).toBe(409);

    const worker = await spawnMailverdict(['worker', '--data-dir', dataDir], {
      env: cleanEnv({ MAILVERDICT_LOG_LEVEL: 'warn', ...storeEnv }),
    });
    try {
      await waitFor(
        'the job completes',
        async () => {
          const job = await call('getJob', { key: testKey, params: { id: jobId } });
          return (job.json() as { status: string }).status === 'completed' ? true : undefined;
        },
        60_000,
        200,
      );
    } finally {
      await worker.stop();
    }
    expect((await call('getJobResults', { key: testKey, params: { id: jobId } })).status).toBe(200);
    const json = await call('getJobResults', { key: testKey, params: { id: jobId }, query: '?format=json' });
    expect((json.json() as { results: unknown[] }).results).toHaveLength(3);
    expect(
      (await call('getJobResults', { key: testKey, params: { id: jobId }, query: '?format=xml' })).status,
    ).toBe(422);
    expect((await call('getJobResults', { key: testKey, params: { id: 'job_nope' } })).status).toBe(404);
    expect((await call('getJob', { key: testKey, params: { id: 'job_nope' } })).status).toBe(404);
    expect((await call('cancelJob', { key: testKey, params: { id: jobId } })).status).toBe(409);
    expect((await call('cancelJob', { key: testKey, params: { id: 'job_nope' } })).status).toBe(404);

    const page = await call('listJobs', { key: testKey, query: '?limit=1' });
    const cursor = (page.json() as { next_cursor: string | null }).next_cursor;
    expect(cursor).not.toBeNull();
    const next = await call('listJobs', {
      key: testKey,
      query: `?limit=1&cursor=${encodeURIComponent(cursor!)}`,
    });
    expect(next.status).toBe(200);
    expect((await call('listJobs', { key: testKey, query: '?limit=0' })).status).toBe(422);
  });

  it('reportOutcomes and eraseOutcomes: events taken and refused, an erasure, and their refusals', async () => {
    const events = [
      { email: 'anna@valid.example.com', type: 'delivered' },
      { email: 'nobody@invalid.example.com', type: 'hard_bounce', at: '2026-01-01T00:00:00Z' },
      { email: 'not an address', type: 'delivered' },
    ];
    const taken = await call('reportOutcomes', { key: liveKey, body: { events } });
    expect(taken.status).toBe(200);
    expect(taken.json()).toMatchObject({ refused: 1 });
    expect((await call('reportOutcomes', { key: liveKey, body: { events: 'none' } })).status).toBe(422);
    expect((await call('reportOutcomes', { key: limitedKey, body: { events } })).status).toBe(403);
    expect((await call('reportOutcomes', { body: { events } })).status).toBe(401);
    const erased = await call('eraseOutcomes', {
      key: liveKey,
      query: `?email=${encodeURIComponent('anna@valid.example.com')}`,
    });
    expect(erased.status).toBe(200);
    expect((await call('eraseOutcomes', { key: limitedKey, query: '?email=a%40b.example' })).status).toBe(
      403,
    );
  });

  it('getOutcomesReport: the report of a live key, of a test key, and its refusals', async () => {
    const report = await call('getOutcomesReport', { key: liveKey, query: '?from=2026-01-01' });
    expect(report.status).toBe(200);
    expect((await call('getOutcomesReport', { key: testKey })).status).toBe(200);
    expect((await call('getOutcomesReport', { key: liveKey, query: '?from=soon' })).status).toBe(422);
    expect((await call('getOutcomesReport', { key: liveKey, query: '?week=1' })).status).toBe(422);
    expect((await call('getOutcomesReport', { key: limitedKey })).status).toBe(403);
    expect((await call('getOutcomesReport', {})).status).toBe(401);
  });

  it('listFilters, addFilter and deleteFilter: a filter from its creation to its deletion', async () => {
    const added = await call('addFilter', {
      key: liveKey,
      body: { action: 'block', match: 'domain', value: 'blocked.example' },
    });
    expect(added.status).toBe(200);
    const id = (added.json() as { id: string }).id;
    expect((await call('addFilter', { key: liveKey, body: { action: 'maybe' } })).status).toBe(422);
    expect((await call('listFilters', { key: liveKey })).status).toBe(200);
    expect((await call('listFilters', { key: limitedKey })).status).toBe(403);
    expect((await call('deleteFilter', { key: liveKey, params: { id } })).status).toBe(200);
    expect((await call('deleteFilter', { key: liveKey, params: { id } })).status).toBe(404);
  });

  it('listOutcomeSources, createOutcomeSource and deleteOutcomeSource: a source from its creation to its deletion', async () => {
    const made = await call('createOutcomeSource', {
      key: liveKey,
      body: { provider: 'postmark', label: 'main' },
    });
    expect(made.status).toBe(200);
    const id = (made.json() as { id: string }).id;
    expect((await call('createOutcomeSource', { key: liveKey, body: { provider: 'sendgrid' } })).status).toBe(
      422,
    );
    expect((await call('createOutcomeSource', { key: testKey, body: { provider: 'ses' } })).status).toBe(403);
    expect((await call('listOutcomeSources', { key: liveKey })).status).toBe(200);
    expect((await call('listOutcomeSources', { key: limitedKey })).status).toBe(403);
    expect((await call('deleteOutcomeSource', { key: liveKey, params: { id } })).status).toBe(200);
    expect((await call('deleteOutcomeSource', { key: liveKey, params: { id } })).status).toBe(404);
  });

  it('called every operation of the document', () => {
    const called = new Set(seen.map((s) => s.operationId));
    expect([...operations.keys()].filter((id) => !called.has(id))).toEqual([]);
  });
});

/**
 * The API fuzzer's property, shared by the bounded run in `npm test` (test/fuzz/api.fuzz.test.ts)
 * and the long run (`npm run fuzz -- --runs 100000`, bench/fuzz.ts).
 *
 * Random requests (methods, paths, query strings, content types, headers, key shapes, bodies:
 * random JSON, random text, and near-valid verify and batch bodies) go through `app.inject()` to
 * the real app on a real SQLite file. Invariants: never a 5xx; every response carries
 * X-Request-Id, and every error is the envelope with that id; nothing is counted against the
 * quota except accepted live work.
 */
import fc from 'fast-check';
import type { Harness } from './api-harness.js';

const PATHS = [
  '/v1/verify',
  '/v1/verify/batch',
  '/v1/jobs',
  '/v1/jobs/job_00000000000000000000',
  '/v1/jobs/job_00000000000000000000/results',
  '/v1/account/usage',
  '/healthz',
  '/readyz',
  '/metrics',
  '/v1/openapi.json',
  '/',
  '/v2/verify',
];

const segment = fc.oneof(
  fc.constantFrom('v1', 'verify', 'batch', 'jobs', '..', '.', '%2e%2e', '%00', '%zz', '%', '~', ''),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
  fc.string({ unit: 'binary', maxLength: 8 }).map((s) => encodeURIComponent(s)),
);

const path = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PATHS) },
  { weight: 1, arbitrary: fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join('/')}`) },
);

const query = fc.oneof(
  fc.constant(''),
  fc.constantFrom(
    '?format=csv',
    '?format=json',
    '?format=xml',
    '?limit=0',
    '?limit=101',
    '?limit=abc',
    '?cursor=%zz',
    '?limit=5&cursor=x',
  ),
  fc
    .dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 10 }), { maxKeys: 3 })
    .map((q) => `?${new URLSearchParams(q).toString()}`),
);

const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    '',
  ),
  fc.string({ maxLength: 20 }),
);

const email = fc.oneof(
  fc.constantFrom(
    'anna@valid.example.com',
    'bob@invalid.example.com',
    'x@disposable.example.com',
    'a@nowhere.test',
    'no-at-sign',
    '"quoted local"@valid.example.com',
    'a@[127.0.0.1]',
    'a\r\nRCPT TO:<x@y>@valid.example.com',
    'ü@valid.example.com',
    '',
  ),
  fc.emailAddress(),
  fc.string({ maxLength: 40 }),
);

const verifyBody = fc.record(
  {
    email: fc.oneof(email, fc.anything()),
    timeout_ms: fc.oneof(fc.integer(), fc.constant('300'), fc.double()),
  },
  { requiredKeys: [] },
);

const batchBody = fc.record(
  {
    emails: fc.oneof(fc.array(email, { maxLength: 20 }), fc.anything()),
    webhook_url: fc.oneof(fc.webUrl(), fc.string({ maxLength: 30 }), fc.constant(null), fc.anything()),
    notify_email: fc.oneof(fc.boolean(), fc.anything()),
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  fc.constant(undefined),
  { weight: 3, arbitrary: verifyBody.map((b) => JSON.stringify(b)) },
  { weight: 3, arbitrary: batchBody.map((b) => JSON.stringify(b)) },
  fc.json({ maxDepth: 4 }),
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '[',
    '{"emails":[[[[[[',
    'null',
    '""',
  ),
);

export interface FuzzRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS';
  url: string;
  headers: Record<string, string>;
  payload: string | undefined;
  key: 'live' | 'test' | 'none' | 'garbage';
}

/** Real routes with their method: most requests should get past routing to the checks behind it. */
const ROUTES: [FuzzRequest['method'], string][] = [
  ['POST', '/v1/verify'],
  ['POST', '/v1/verify/batch'],
  ['GET', '/v1/jobs'],
  ['GET', '/v1/jobs/job_00000000000000000000'],
  ['GET', '/v1/jobs/job_00000000000000000000/results'],
  ['DELETE', '/v1/jobs/job_00000000000000000000'],
  ['GET', '/v1/account/usage'],
];

const methodAndPath = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ROUTES) },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.constantFrom<FuzzRequest['method']>('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
      path,
    ),
  },
);

export function fuzzRequest(): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      route: methodAndPath,
      query,
      contentType: fc.oneof(
        { weight: 3, arbitrary: fc.constant('application/json') },
        { weight: 1, arbitrary: contentType },
      ),
      key: fc.constantFrom('live', 'test', 'test', 'live', 'none', 'garbage'),
      garbageKey: fc.oneof(
        fc.string({ maxLength: 60 }),
        fc.constantFrom('svc_live_', 'svc_test_short', `svc_live_${'A'.repeat(40)}`, 'Bearer', 'Basic abc'),
      ),
      scheme: fc.constantFrom('Bearer ', 'Bearer ', 'Bearer ', 'bearer ', 'Bearer  ', 'Token ', ''),
      extra: fc.dictionary(
        fc.constantFrom(
          'x-request-id',
          'idempotency-key',
          'accept',
          'x-forwarded-for',
          'content-length-x',
          'cookie',
        ),
        fc.string({ maxLength: 40 }).filter((v) => !/[\r\n\0]/.test(v)),
        { maxKeys: 3 },
      ),
      payload: body,
    })
    .map((r) => ({
      method: r.route[0],
      url: `${r.route[1]}${r.query}`,
      headers: {
        ...r.extra,
        ...(r.contentType === '' ? {} : { 'content-type': r.contentType }),
        ...(r.key === 'none'
          ? {}
          : { authorization: `${r.scheme}${r.key === 'garbage' ? r.garbageKey : `<${r.key}>`}` }),
      },
      payload: r.payload,
      key: r.key,
    }));
}

/** Usage counted so far on the harness's account (live keys only count). */
async function used(h: Harness): Promise<number> {
  const row = await h.runtime.ctx.db
    .selectFrom('usage_periods')
    .select((eb) => eb.fn.sum<number>('used').as('n'))
    .where('account_id', '=', h.accountId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Sends one fuzzed request and checks the invariants; throws with the request when one breaks. */
export async function checkOne(h: Harness, r: FuzzRequest): Promise<void> {
  const headers = { ...r.headers };
  if (headers.authorization !== undefined)
    headers.authorization = headers.authorization.replace('<live>', h.liveKey).replace('<test>', h.testKey);
  const before = await used(h);
  const res = await h.inject({
    method: r.method,
    url: r.url,
    headers,
    ...(r.payload === undefined ? {} : { payload: r.payload }),
  });
  const after = await used(h);
  const fail = (why: string) => {
    throw new Error(
      `${why}: ${r.method} ${r.url} ${JSON.stringify(headers)} body=${JSON.stringify(r.payload)?.slice(0, 300)} -> ${res.statusCode} ${res.body.slice(0, 300)}`,
    );
  };
  if (res.statusCode >= 500) fail('a 5xx');
  const requestId = res.headers['x-request-id'];
  if (typeof requestId !== 'string' || !/^req_[0-9a-f]{32}$/.test(requestId)) fail('no X-Request-Id');
  if (res.statusCode >= 400 && r.method !== 'HEAD') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.body);
    } catch {
      fail('an error that is not JSON');
    }
    const e = parsed as { error?: unknown; message?: unknown; request_id?: unknown };
    if (typeof e.error !== 'string' || typeof e.message !== 'string' || e.request_id !== requestId)
      fail('not the envelope');
  }
  if (res.statusCode >= 400 && after !== before)
    fail(`a refused request counted ${after - before} against the quota`);
  const counted =
    r.key === 'live' &&
    res.statusCode < 300 &&
    r.method === 'POST' &&
    (r.url.startsWith('/v1/verify?') || r.url === '/v1/verify' || r.url.startsWith('/v1/verify/batch'));
  if (!counted && after !== before) fail(`a request that does no live work counted ${after - before}`);
}

/**
 * `npm run bench:outcomes` (issue 27): what delivery outcomes cost.
 *
 * 1. Intake: POST /v1/outcomes with 10,000 events in one request (distinct addresses, a new set
 *    each round), through the real app (`app.inject`, the API harness) on a real SQLite file and,
 *    with a PostgreSQL URL, on PostgreSQL: wall time per request and events per second.
 * 2. The look-up every live verification now makes before the cache and the engine (the account's
 *    filters and the history of the address, services/outcomes/account-data.ts): process CPU per
 *    look-up, in a loop of one address at a time, against an account holding 20,000 events; and,
 *    beside it, process CPU per POST /v1/verify (live key, answered from the result cache, so no
 *    network) in the same process, which includes the look-up.
 * 3. Bounce messages (once, not per backend for the parse): eventsFromMessage on the corpus of
 *    test/kit/bounce-corpus.ts (Postfix, Exim, Microsoft 365, Exchange text, Gmail, Yahoo, ARF, a
 *    new recipient each), messages per second; then POST /v1/outcomes with one message at a time
 *    (message/rfc822) through the app on each backend: wall time per message, parse and intake.
 * 4. The mail systems' webhooks (bench/outcome-hooks.ts): events per second through one SendGrid
 *    source (signed batches of 1,000) and one Mailgun source (one signed event per POST).
 * 5. The verdict log every live verification now writes (services/outcomes/verdict-log.ts): process
 *    CPU per verdict recorded through the buffer (flushes included), against one upsert
 *    transaction per verdict (the design not taken), each beside the POST /v1/verify of (2).
 *
 *   --rounds 5                 intake rounds per backend
 *   --lookups 3000             look-ups (and verifications) measured
 *   --messages 2000            bounce messages parsed (and a tenth of them posted)
 *   --database-url <url>       PostgreSQL too (default: MAILVERDICT_TEST_DATABASE_URL, if set)
 *   --max-seconds 300          stop measuring after this long, whatever the counts
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { decideByAccount } from '../src/services/outcomes/account-data.js';
import { outcomeAddress } from '../src/services/outcomes/address-key.js';
import { upsertVerdicts } from '../src/store/verdict-log.store.js';
import { eventsFromMessage } from '../src/services/outcomes/bounce-message.js';
import { createHarness, type Harness } from '../test/kit/api-harness.js';
import * as corpus from '../test/kit/bounce-corpus.js';
import { createTestSchema } from '../test/kit/store-harness.js';
import { hookFigures } from './outcome-hooks.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    lookups: { type: 'string', default: '3000' },
    messages: { type: 'string', default: '2000' },
    'database-url': { type: 'string' },
    'max-seconds': { type: 'string', default: '300' },
  },
});
const ROUNDS = Number(values.rounds);
const LOOKUPS = Number(values.lookups);
const MESSAGES = Number(values.messages);
const PG_URL = values['database-url'] ?? process.env.MAILVERDICT_TEST_DATABASE_URL;
const DEADLINE = performance.now() + Number(values['max-seconds']) * 1000;

function events(round: number, n = 10_000) {
  return Array.from({ length: n }, (_, i) => ({
    email: `r${round}-user${i}@bench${i % 50}.test`,
    type: i % 10 === 0 ? 'hard_bounce' : 'delivered',
    at: '2026-03-01T10:00:00Z',
    source_id: `msg-${round}-${i}`,
  }));
}

async function intake(h: Harness, round: number): Promise<number> {
  const payload = JSON.stringify({ events: events(round) });
  const started = performance.now();
  const res = await h.inject({
    method: 'POST',
    url: '/v1/outcomes',
    headers: { authorization: `Bearer ${h.liveKey}`, 'content-type': 'application/json' },
    payload,
  });
  const ms = performance.now() - started;
  const body = res.json<{ taken: number; duplicates: number }>();
  if (res.statusCode !== 200 || body.taken !== 10_000 || body.duplicates !== 0)
    throw new Error(`intake failed: ${res.statusCode} ${res.body.slice(0, 200)}`);
  return ms;
}

const cpuMicros = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function lookups(h: Harness): Promise<{ lookupUs: number; verifyUs: number; n: number }> {
  const { ctx } = h.runtime;
  h.dns.setNxdomain('nx.test');
  // An answer in the result cache: a verification with no network (NXDOMAIN is cached).
  const cached = await h.verify(h.liveKey, { email: 'someone@nx.test' });
  if (cached.statusCode !== 200) throw new Error(cached.body);
  const emails = Array.from({ length: 100 }, (_, i) => `r0-user${i * 7}@bench${(i * 7) % 50}.test`);
  for (let i = 0; i < 200; i++) await decideByAccount(ctx, h.accountId, [emails[i % emails.length]!]);
  let n = 0;
  let start = cpuMicros();
  for (; n < LOOKUPS && performance.now() < DEADLINE; n++)
    await decideByAccount(ctx, h.accountId, [emails[n % emails.length]!]);
  const lookupUs = (cpuMicros() - start) / n;
  for (let i = 0; i < 200; i++) await h.verify(h.liveKey, { email: 'someone@nx.test' });
  start = cpuMicros();
  let m = 0;
  for (; m < n; m++) {
    const res = await h.verify(h.liveKey, { email: 'someone@nx.test' });
    if (res.statusCode !== 200) throw new Error(res.body);
  }
  return { lookupUs, verifyUs: (cpuMicros() - start) / m, n };
}

/** CPU per verdict: recorded through the buffer (flushes included), and written one upsert at a time. */
async function verdictLogCost(h: Harness, n: number): Promise<{ bufferedUs: number; directUs: number }> {
  const { verdictLog, db } = h.runtime.ctx;
  const verdict = (i: number, round: string) => ({
    email: `${round}-v${i}@bench${i % 50}.test`,
    status: 'deliverable' as const,
    reason: null,
    score: 95,
    provider: null,
  });
  let start = cpuMicros();
  for (let i = 0; i < n; i++) verdictLog.record(h.accountId, [verdict(i, 'buffered')]);
  await verdictLog.flush();
  const bufferedUs = (cpuMicros() - start) / n;
  start = cpuMicros();
  for (let i = 0; i < n; i++) {
    const v = verdict(i, 'direct');
    const address = outcomeAddress(h.accountId, v.email);
    if ('error' in address) throw new Error(address.error);
    const now = new Date().toISOString();
    await db.transaction().execute((trx) =>
      upsertVerdicts(trx, [
        {
          account_id: h.accountId,
          address_key: address.key,
          status: v.status,
          reason: '',
          score: v.score,
          provider: '',
          since: now,
          verified_at: now,
        },
      ]),
    );
  }
  return { bufferedUs, directUs: (cpuMicros() - start) / n };
}

const KINDS = [
  corpus.postfixHardBounce,
  corpus.eximHardBounce,
  corpus.microsoft365HardBounce,
  corpus.exchangeTextBounce,
  corpus.gmailHardBounce,
  corpus.yahooTextBounce,
  corpus.arfComplaint,
];
const bounce = (i: number): Uint8Array =>
  new TextEncoder().encode(
    KINDS[i % KINDS.length]!({ rcpt: `bounced${i}@bench${i % 50}.test`, messageId: `m${i}@bench` }),
  );

async function parseMessages(): Promise<void> {
  const messages = Array.from({ length: MESSAGES }, (_, i) => bounce(i));
  for (let i = 0; i < 100; i++) await eventsFromMessage(messages[i % messages.length]!);
  const started = performance.now();
  let n = 0;
  let events = 0;
  for (; n < messages.length && performance.now() < DEADLINE; n++)
    events += (await eventsFromMessage(messages[n]!)).events.length;
  const ms = performance.now() - started;
  if (events !== n) throw new Error(`expected one event per message, got ${events} of ${n}`);
  console.log(
    `bounce messages parsed (eventsFromMessage, ${KINDS.length} sender kinds in turn, ` +
      `${Math.round(messages.reduce((a, m) => a + m.byteLength, 0) / messages.length)} bytes on average): ` +
      `${n} in ${ms.toFixed(0)} ms, ${Math.round(n / (ms / 1000)).toLocaleString('en')} messages/s, ${((1000 * ms) / n).toFixed(0)} µs each`,
  );
}

async function postMessages(h: Harness, backend: string): Promise<void> {
  const count = Math.max(1, Math.floor(MESSAGES / 10));
  const times: number[] = [];
  for (let i = 0; i < count && performance.now() < DEADLINE; i++) {
    const payload = Buffer.from(bounce(100_000 + i));
    const started = performance.now();
    const res = await h.inject({
      method: 'POST',
      url: '/v1/outcomes',
      headers: { authorization: `Bearer ${h.liveKey}`, 'content-type': 'message/rfc822' },
      payload,
    });
    times.push(performance.now() - started);
    if (res.statusCode !== 200 || res.json<{ taken: number }>().taken !== 1)
      throw new Error(`message intake failed: ${res.statusCode} ${res.body.slice(0, 200)}`);
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(
    `${backend}: POST /v1/outcomes with one bounce message (parse and intake), ${times.length} messages: ` +
      `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} ms, max ${sorted[sorted.length - 1]!.toFixed(2)} ms`,
  );
}

async function run(backend: 'sqlite' | 'postgres'): Promise<void> {
  const flags = backend === 'postgres' ? { databaseUrl: (await createTestSchema()).url } : {};
  const h = await createHarness({ flags, account: { quotaLimit: 10_000_000, rateLimit: 10_000_000 } });
  try {
    const times: number[] = [];
    for (let round = 0; round < ROUNDS && performance.now() < DEADLINE; round++)
      times.push(await intake(h, round));
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    console.log(
      `${backend}: intake of 10,000 events in one request, ${times.length} rounds: ` +
        `median ${median.toFixed(0)} ms (${Math.round(10_000 / (median / 1000)).toLocaleString('en')} events/s), ` +
        `min ${sorted[0]!.toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms; ms per round: ${times.map((t) => t.toFixed(0)).join(', ')}`,
    );
    await postMessages(h, backend);
    await hookFigures(h, backend, ROUNDS, DEADLINE);
    const { lookupUs, verifyUs, n } = await lookups(h);
    console.log(
      `${backend}: account-data look-up (filters + history, one address, ${times.length * 10_000} events held): ` +
        `${lookupUs.toFixed(1)} µs CPU per look-up; POST /v1/verify answered from the cache (look-up included): ` +
        `${verifyUs.toFixed(1)} µs CPU per request; the look-up is ${((100 * lookupUs) / verifyUs).toFixed(1)} % of it (${n} each)`,
    );
    const { bufferedUs, directUs } = await verdictLogCost(h, n);
    console.log(
      `${backend}: verdict log: ${bufferedUs.toFixed(1)} µs CPU per verdict buffered (flushes included), ` +
        `${((100 * bufferedUs) / verifyUs).toFixed(1)} % of the verification above; one upsert transaction per verdict ` +
        `instead: ${directUs.toFixed(1)} µs (${((100 * directUs) / verifyUs).toFixed(1)} %) (${n} each)`,
    );
  } finally {
    await h.close();
  }
}

await parseMessages();
await run('sqlite');
if (PG_URL) {
  process.env.MAILVERDICT_TEST_DATABASE_URL = PG_URL;
  await run('postgres');
} else console.log('postgres: skipped (no --database-url and no MAILVERDICT_TEST_DATABASE_URL)');

/**
 * Delivery outcomes through the API (issue 27, parts 1 and 2): POST and DELETE /v1/outcomes, the
 * suppression they cause in single verifications and batch jobs, the result cache's invalidation
 * (in one process and through Redis in two), the retention sweep. A real app on a real store
 * (PostgreSQL with MAILVERDICT_TEST_STORE=postgres), the real engine against the in-process DNS
 * server and a loopback MTA: what the MTA and the DNS server saw says whether a network check ran.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { DAY, ManualClock } from '../../src/clock.js';
import { sweepOnce } from '../../src/jobs/sweep.js';
import { createRuntime } from '../../src/runtime.js';
import { createKey } from '../../src/services/keys/keys.service.js';
import { createHarness, errorOf, type Harness } from '../kit/api-harness.js';
import { type JobsHarness, type ResultsJson, createLiveJobsHarness } from '../kit/jobs-kit.js';
import { startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import { skipWithoutRedis, TEST_REDIS_URL, testRedis, type TestRedis } from '../redis/redis-kit.js';

let kit: SmtpKit;

beforeAll(async () => {
  kit = await startSmtpServers({
    mta: { kind: 'mta', mailboxes: Array.from({ length: 40 }, (_, i) => `user${i}`) },
  });
});
afterAll(async () => {
  await kit?.close();
});
beforeEach(() => {
  kit.resetRecords();
});

const mta = () => kit.hosts.mta!;
const rcptsFor = (email: string) =>
  mta().commands.filter((c) => c.toLowerCase() === `rcpt to:<${email.toLowerCase()}>`).length;

function route(h: Harness, domain = 'acme.test'): void {
  h.dns.setDomain(domain, { mx: [{ exchange: `mx1.${domain}`, priority: 10 }] });
  h.dns.setDomain(`mx1.${domain}`, { a: [mta().ip] });
}

interface Verdict {
  status: string;
  reason: string | null;
  score: number;
  valid: boolean;
  cached: boolean;
  checks: {
    history?: {
      passed: boolean | null;
      events: { type: string; at: string; source: string }[];
      decided_by: unknown;
    };
  };
}

async function verify(h: Harness, email: string, key = h.liveKey): Promise<Verdict> {
  const res = await h.verify(key, { email });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Verdict>();
}

type Event = { email: string; type: string; at?: string; detail?: string; source_id?: string };

function post(h: Harness, events: unknown, key = h.liveKey) {
  return h.inject({
    method: 'POST',
    url: '/v1/outcomes',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ events }),
  });
}

async function report(h: Harness, events: Event[], key = h.liveKey) {
  const res = await post(h, events, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{
    taken: number;
    duplicates: number;
    refused: number;
    refusals: { index: number; reason: string; message: string }[];
  }>();
}

function erase(h: Harness, email: string, key = h.liveKey) {
  return h.inject({
    method: 'DELETE',
    url: `/v1/outcomes?email=${encodeURIComponent(email)}`,
    headers: { authorization: `Bearer ${key}` },
  });
}

describe('POST /v1/outcomes', () => {
  let h: Harness;
  const lines: string[] = [];
  beforeAll(async () => {
    h = await createHarness({ flags: { smtpPort: String(kit.port) }, logLines: lines });
    route(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('takes valid events and refuses the others with their index and reason', async () => {
    const out = await report(h, [
      { email: 'user1@acme.test', type: 'delivered', at: '2026-03-01T10:00:00Z' },
      { email: 'not an address', type: 'delivered' },
      { email: 'user2@acme.test', type: 'bounced' },
      { email: 'user3@acme.test', type: 'hard_bounce', at: 'yesterday' },
      { email: 'user4@acme.test', type: 'hard_bounce', at: '2026-03-11T12:00:00Z' },
      { email: 'user5@acme.test', type: 'hard_bounce', at: '2020-01-01T00:00:00Z' },
      { email: 'user6@acme.test', type: 'soft_bounce', source_id: 'a\nb' },
      { email: 'user7@acme.test', type: 'opened', at: '2026-03-02T10:00:00+02:00', source_id: 'm-1' },
    ]);
    expect(out.taken).toBe(2);
    expect(out.duplicates).toBe(0);
    expect(out.refused).toBe(6);
    expect(out.refusals.map((r) => [r.index, r.reason])).toEqual([
      [1, 'invalid_email'],
      [2, 'invalid_type'],
      [3, 'invalid_at'],
      [4, 'invalid_at'],
      [5, 'expired'],
      [6, 'invalid_source_id'],
    ]);
  });

  it('is idempotent on (address, type, time, source id), the address matched without regard to case', async () => {
    const events = [
      { email: 'user8@acme.test', type: 'delivered', at: '2026-03-05T10:00:00.000Z', source_id: 'x1' },
      { email: 'User8@ACME.test', type: 'delivered', at: '2026-03-05T11:00:00+01:00', source_id: 'x1' },
      { email: 'user8@acme.test', type: 'delivered', at: '2026-03-05T10:00:00.000Z', source_id: 'x2' },
    ];
    expect(await report(h, events)).toMatchObject({ taken: 3, duplicates: 1, refused: 0 });
    expect(await report(h, events)).toMatchObject({ taken: 3, duplicates: 3, refused: 0 });
  });

  it('stores events given in more than one INSERT of rows, counting each once', async () => {
    const events = Array.from({ length: 1201 }, (_, i) => ({
      email: `many${i}@acme.test`,
      type: 'delivered',
      at: '2026-03-06T10:00:00Z',
    }));
    expect(await report(h, events)).toMatchObject({ taken: 1201, duplicates: 0, refused: 0 });
    expect(await report(h, events)).toMatchObject({ taken: 1201, duplicates: 1201, refused: 0 });
  });

  it('refuses more than 10,000 events as a whole and stores none of them', async () => {
    const events = Array.from({ length: 10_001 }, (_, i) => ({
      email: `bulk${i}@acme.test`,
      type: 'hard_bounce',
    }));
    const res = await post(h, events);
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).error).toBe('invalid_request');
    expect(errorOf(res).message).toContain('events');
    expect((await verify(h, 'bulk0@acme.test')).reason).not.toBe('previously_bounced');
  });

  it('refuses a malformed event shape as a whole with invalid_request', async () => {
    const res = await post(h, [
      { email: 'user9@acme.test', type: 'hard_bounce' },
      { email: 5, type: 'x' },
    ]);
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).message).toContain('events.1.email');
    expect((await verify(h, 'user9@acme.test')).reason).toBeNull();
  });

  it("checks a test key's events and stores none", async () => {
    const out = await report(h, [{ email: 'user10@acme.test', type: 'hard_bounce' }], h.testKey);
    expect(out).toMatchObject({ taken: 1, refused: 0 });
    expect((await verify(h, 'user10@acme.test')).status).toBe('deliverable');
  });

  it('is refused to a key without outcomes:write, as keys made before the scope existed are', async () => {
    const { key } = await createKey(h.runtime.ctx.db, h.clock, {
      accountId: h.accountId,
      kind: 'live',
      scopes: ['verify', 'batch', 'jobs:read', 'usage:read'],
    });
    const res = await post(h, [{ email: 'user11@acme.test', type: 'hard_bounce' }], key);
    expect(res.statusCode).toBe(403);
    expect(errorOf(res).error).toBe('insufficient_permissions');
    expect((await erase(h, 'user11@acme.test', key)).statusCode).toBe(403);
  });

  it('never writes an address to the log', () => {
    expect(lines.some((l) => l.includes('"outcomes taken"'))).toBe(true);
    expect(lines.filter((l) => /user\d+@|acme\.test/i.test(l))).toEqual([]);
  });
});

describe('suppression in single verifications', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ flags: { smtpPort: String(kit.port) } });
    route(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('answers a hard-bounced address undeliverable / previously_bounced with no network check', async () => {
    await report(h, [{ email: 'user12@acme.test', type: 'hard_bounce', at: '2026-03-09T08:00:00Z' }]);
    const dnsBefore = h.dns.queries.length;
    const v = await verify(h, 'user12@acme.test');
    expect(v).toMatchObject({
      status: 'undeliverable',
      reason: 'previously_bounced',
      valid: false,
      score: 4,
    });
    expect(v.checks.history).toEqual({
      passed: false,
      events: [{ type: 'hard_bounce', at: '2026-03-09T08:00:00.000Z', source: 'api' }],
      decided_by: { type: 'hard_bounce', at: '2026-03-09T08:00:00.000Z', source: 'api' },
    });
    expect(h.dns.queries.length).toBe(dnsBefore);
    expect(rcptsFor('user12@acme.test')).toBe(0);
  });

  it('answers a complained address risky / complained with no network check', async () => {
    await report(h, [{ email: 'user13@acme.test', type: 'complaint', at: '2026-03-09T08:00:00Z' }]);
    const v = await verify(h, 'user13@acme.test');
    expect(v).toMatchObject({ status: 'risky', reason: 'complained', valid: false, score: 20 });
    expect(v.checks.history?.passed).toBe(false);
    expect(rcptsFor('user13@acme.test')).toBe(0);
  });

  it('lifts a bounce with a later delivery, and probes again', async () => {
    await report(h, [{ email: 'user14@acme.test', type: 'hard_bounce', at: '2026-03-01T08:00:00Z' }]);
    expect((await verify(h, 'user14@acme.test')).reason).toBe('previously_bounced');
    await report(h, [{ email: 'user14@acme.test', type: 'delivered', at: '2026-03-02T08:00:00Z' }]);
    const v = await verify(h, 'user14@acme.test');
    expect(v).toMatchObject({ status: 'deliverable', reason: null });
    expect(v.checks.history?.passed).toBe(true);
    expect(v.checks.history?.events.map((e) => e.type)).toEqual(['delivered', 'hard_bounce']);
    expect(rcptsFor('user14@acme.test')).toBe(1);
  });

  it('does not lift a bounce with an earlier delivery', async () => {
    await report(h, [
      { email: 'user15@acme.test', type: 'delivered', at: '2026-03-01T08:00:00Z' },
      { email: 'user15@acme.test', type: 'hard_bounce', at: '2026-03-02T08:00:00Z' },
    ]);
    expect((await verify(h, 'user15@acme.test')).reason).toBe('previously_bounced');
  });

  it('suppresses nothing for a soft bounce alone', async () => {
    await report(h, [{ email: 'user16@acme.test', type: 'soft_bounce', at: '2026-03-09T08:00:00Z' }]);
    const v = await verify(h, 'user16@acme.test');
    expect(v).toMatchObject({ status: 'deliverable', reason: null });
    expect(v.checks.history).toMatchObject({ passed: null, decided_by: null });
    expect(rcptsFor('user16@acme.test')).toBe(1);
  });

  it('forgets the cached answer of an address when an outcome comes in', async () => {
    expect((await verify(h, 'user17@acme.test')).cached).toBe(false);
    expect((await verify(h, 'user17@acme.test')).cached).toBe(true);
    await report(h, [
      { email: 'USER17@acme.test', type: 'hard_bounce', at: '2026-03-09T08:00:00Z' },
      { email: 'user17@acme.test', type: 'delivered', at: '2026-03-09T09:00:00Z' },
    ]);
    expect((await verify(h, 'user17@acme.test')).cached).toBe(false);
    expect(rcptsFor('user17@acme.test')).toBe(2);
  });

  it('erases an address with DELETE /v1/outcomes, and its suppression with it', async () => {
    await report(h, [{ email: 'user18@acme.test', type: 'hard_bounce', at: '2026-03-09T08:00:00Z' }]);
    const res = await erase(h, 'User18@acme.test');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ deleted: 1 });
    const v = await verify(h, 'user18@acme.test');
    expect(v).toMatchObject({ status: 'deliverable' });
    expect(v.checks.history?.events).toEqual([]);
    const bad = await erase(h, 'nope');
    expect(bad.statusCode).toBe(422);
    expect(errorOf(bad).error).toBe('invalid_email_format');
  });

  it("never lets one account's outcomes reach another's verifications", async () => {
    await report(h, [{ email: 'user19@acme.test', type: 'hard_bounce', at: '2026-03-09T08:00:00Z' }]);
    const jobs = await createJobsHarnessLike(h);
    expect((await verify(h, 'user19@acme.test', jobs.liveKey)).status).toBe('deliverable');
  });

  it('prunes events older than the outcome retention in the retention sweep', async () => {
    await report(h, [{ email: 'user20@acme.test', type: 'hard_bounce', at: '2026-03-01T08:00:00Z' }]);
    (h.clock as ManualClock).advance(731 * DAY);
    const swept = await sweepOnce(h.runtime.ctx.db, h.clock);
    expect(swept.outcomeEvents).toBeGreaterThanOrEqual(1);
    expect((await verify(h, 'user20@acme.test')).reason).not.toBe('previously_bounced');
  });
});

/** A second account with a live key on the same store. */
async function createJobsHarnessLike(h: Harness): Promise<{ liveKey: string }> {
  const { createAccount } = await import('../../src/services/accounts/accounts.service.js');
  const account = await createAccount(h.runtime.ctx.db, h.clock, {
    email: 'second@example.org',
    rateLimit: 1000,
  });
  const { key } = await createKey(h.runtime.ctx.db, h.clock, { accountId: account.id, kind: 'live' });
  return { liveKey: key };
}

describe('suppression in batch jobs', () => {
  let h: JobsHarness;
  beforeAll(async () => {
    h = await createLiveJobsHarness({
      flags: { chunkSize: '10', smtpPort: String(kit.port) },
      account: { plan: 'starter' },
    });
    route(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('answers suppressed addresses before probing, so the mail server is never asked about them', async () => {
    await report(h, [
      { email: 'user21@acme.test', type: 'hard_bounce', at: '2026-03-09T08:00:00Z' },
      { email: 'user22@acme.test', type: 'complaint', at: '2026-03-09T08:00:00Z' },
      { email: 'user23@acme.test', type: 'soft_bounce', at: '2026-03-09T08:00:00Z' },
    ]);
    const emails = ['user21@acme.test', 'user22@acme.test', 'user23@acme.test', 'user24@acme.test'];
    const res = await h.submit(h.liveKey, { emails, notify_email: false });
    expect(res.statusCode).toBe(202);
    await h.drain();
    const rows = (
      await h.results(h.liveKey, res.json<{ job_id: string }>().job_id, 'json')
    ).json<ResultsJson>().results;
    expect(rows.map((r) => [r.status, r.reason])).toEqual([
      ['undeliverable', 'previously_bounced'],
      ['risky', 'complained'],
      ['deliverable', null],
      ['deliverable', null],
    ]);
    expect(rcptsFor('user21@acme.test')).toBe(0);
    expect(rcptsFor('user22@acme.test')).toBe(0);
    expect(rcptsFor('user23@acme.test')).toBe(1);
  });
});

describe('a new outcome reaches every process through the Redis result cache', () => {
  const skip = skipWithoutRedis('outcome invalidation through Redis');
  let redis: TestRedis;
  let h: Harness;
  afterAll(async () => {
    await h?.close();
    await redis?.close();
  });

  it.skipIf(skip)(
    'forgets, on one instance, the answer the other cached when an outcome comes in',
    async () => {
      redis = testRedis();
      const clock = new ManualClock('2026-03-10T12:00:00.000Z');
      const flags = { smtpPort: String(kit.port), redisUrl: TEST_REDIS_URL, redisKeyPrefix: redis.prefix };
      h = await createHarness({ clock, flags });
      route(h);
      const runtime = await createRuntime(h.runtime.ctx.config, { clock, logger: h.runtime.ctx.logger });
      const other = buildApp(runtime.ctx);
      try {
        expect((await verify(h, 'user25@acme.test')).cached).toBe(false);
        expect((await verify(h, 'user25@acme.test')).cached).toBe(true);
        const res = await other.inject({
          method: 'POST',
          url: '/v1/outcomes',
          headers: { authorization: `Bearer ${h.liveKey}`, 'content-type': 'application/json' },
          payload: JSON.stringify({
            events: [{ email: 'user25@acme.test', type: 'delivered', at: '2026-03-10T11:00:00Z' }],
          }),
        });
        expect(res.statusCode, res.body).toBe(200);
        const again = await verify(h, 'user25@acme.test');
        expect(again.cached).toBe(false);
        expect(again.checks.history?.passed).toBe(true);
        expect(rcptsFor('user25@acme.test')).toBe(2);
      } finally {
        await other.close();
        await runtime.close();
      }
    },
  );
});

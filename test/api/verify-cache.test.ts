/**
 * The result cache through the API (issue 10, part 6): a real app on a real SQLite file, the real
 * engine against the in-process DNS server and a loopback MTA, time on a ManualClock. What the MTA
 * saw (sessions, RCPT lines) says whether a probe ran; `cached` and `checked_at` say what the
 * response claims.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import { HOUR, MINUTE, ManualClock } from '../../src/clock.js';
import { batchEngineOptions } from '../../src/config.js';
import { buildApp } from '../../src/api/app.js';
import { createChunkVerifier, type ChunkVerifier } from '../../src/services/batches/chunk-verifier.js';
import { createRuntime } from '../../src/runtime.js';
import { REPLIES, startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import { createJobsHarness, type JobsHarness, type ResultsJson } from '../kit/jobs-kit.js';
import { skipWithoutRedis, TEST_REDIS_URL, testRedis, type TestRedis } from '../redis/redis-kit.js';
import { createHarness, type Harness } from '../kit/api-harness.js';

let kit: SmtpKit;

beforeAll(async () => {
  kit = await startSmtpServers({
    mta: {
      kind: 'mta',
      mailboxes: Array.from({ length: 20 }, (_, i) => `user${i}`),
      rcpt: { grey: REPLIES.greylisted },
    },
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

async function verify(h: Harness, body: Record<string, unknown>, key = h.liveKey) {
  const res = await h.verify(key, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{
    status: string;
    reason: string | null;
    cached: boolean;
    checked_at: string;
    email: string;
  }>();
}

describe('POST /v1/verify with the result cache', () => {
  let h: Harness;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock('2026-03-10T12:00:00.000Z');
    h = await createHarness({ clock, flags: { smtpPort: String(kit.port) } });
    route(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('answers a second verification of the same address from the cache, without an SMTP session', async () => {
    const first = await verify(h, { email: 'user1@acme.test' });
    expect(first).toMatchObject({
      status: 'deliverable',
      cached: false,
      checked_at: clock.now().toISOString(),
    });
    const sessions = mta().connections;
    expect(sessions).toBeGreaterThan(0);

    clock.advance(5 * MINUTE);
    const second = await verify(h, { email: 'user1@ACME.test' });
    expect(second).toMatchObject({ status: 'deliverable', cached: true, checked_at: first.checked_at });
    expect(mta().connections).toBe(sessions);
    expect(rcptsFor('user1@acme.test')).toBe(1);
  });

  it('gives the whole result again, checks included, as it was first found out', async () => {
    const first = (await h.verify(h.liveKey, { email: 'user2@acme.test' })).json();
    const second = (await h.verify(h.liveKey, { email: 'user2@acme.test' })).json();
    const strip = (b: Record<string, unknown>) => ({ ...b, latency_ms: 0, request_id: '', cached: null });
    expect(strip(second)).toEqual(strip(first));
    expect(second.cached).toBe(true);
  });

  it('probes again with fresh: true, and the new answer replaces the cached one', async () => {
    const first = await verify(h, { email: 'user3@acme.test' });
    clock.advance(MINUTE);
    const fresh = await verify(h, { email: 'user3@acme.test', fresh: true });
    expect(fresh).toMatchObject({ cached: false, checked_at: clock.now().toISOString() });
    expect(fresh.checked_at).not.toBe(first.checked_at);
    expect(rcptsFor('user3@acme.test')).toBe(2);
    const after = await verify(h, { email: 'user3@acme.test' });
    expect(after).toMatchObject({ cached: true, checked_at: fresh.checked_at });
    expect(rcptsFor('user3@acme.test')).toBe(2);
  });

  it('probes again once the TTL of the verdict has run out (24 h for deliverable)', async () => {
    await verify(h, { email: 'user4@acme.test' });
    clock.advance(24 * HOUR - 1);
    expect((await verify(h, { email: 'user4@acme.test' })).cached).toBe(true);
    clock.advance(1);
    expect((await verify(h, { email: 'user4@acme.test' })).cached).toBe(false);
    expect(rcptsFor('user4@acme.test')).toBe(2);
  });

  it('never caches an unknown answer: a greylisted address is probed every time', async () => {
    const first = await verify(h, { email: 'grey@acme.test' });
    expect(first).toMatchObject({ status: 'unknown', reason: 'greylisted', cached: false });
    expect((await verify(h, { email: 'grey@acme.test' })).cached).toBe(false);
    expect(rcptsFor('grey@acme.test')).toBe(2);
  });

  it('counts a cached answer against the quota like a probe', async () => {
    const used = async () => (await h.usage(h.liveKey)).json<{ quota: { used: number } }>().quota.used;
    await verify(h, { email: 'user5@acme.test' });
    const before = await used();
    expect((await verify(h, { email: 'user5@acme.test' })).cached).toBe(true);
    expect(await used()).toBe(before + 1);
  });

  it('gives test keys their fixed results, never from nor into the cache', async () => {
    // The fixture domain routed to the live MTA: a live answer there must not leak to the test key.
    route(h, 'valid.example.com');
    const live = await verify(h, { email: 'nobody@valid.example.com' });
    expect(live).toMatchObject({ status: 'undeliverable', reason: 'smtp_rejected' });
    const test = await verify(h, { email: 'nobody@valid.example.com' }, h.testKey);
    expect(test).toMatchObject({
      status: 'deliverable',
      cached: false,
      checked_at: clock.now().toISOString(),
    });

    // And a test key's answer is not what the live key then gets.
    await verify(h, { email: 'carl@valid.example.com' }, h.testKey);
    const afterTest = await verify(h, { email: 'carl@valid.example.com' });
    expect(afterTest).toMatchObject({ status: 'undeliverable', cached: false });
  });
});

describe('batch jobs and single verifications share the cache', () => {
  let h: JobsHarness;
  let engine: BatchEngine;
  beforeAll(async () => {
    const bound: { verify?: ChunkVerifier } = {};
    h = await createJobsHarness({
      flags: { chunkSize: '10', smtpPort: String(kit.port) },
      account: { plan: 'starter' },
      verifyChunk: (...args) => bound.verify!(...args),
    });
    route(h);
    const { ctx } = h.runtime;
    engine = createBatchEngine(batchEngineOptions(ctx.config));
    bound.verify = createChunkVerifier({
      verifier: ctx.verifier,
      dnsTrust: ctx.dnsTrust,
      batchEngine: engine,
      testDomain: ctx.config.testDomain,
      testModeChunkDelayMs: 0,
      resultCache: ctx.resultCache ?? null,
    });
  });
  afterAll(async () => {
    await engine?.close();
    await h?.close();
  });

  it('answers an address verified recently from the cache in a job, and keeps what the job found out', async () => {
    expect((await verify(h, { email: 'user7@acme.test' })).cached).toBe(false);
    expect(rcptsFor('user7@acme.test')).toBe(1);

    const emails = ['user7@acme.test', 'user8@acme.test', 'nobody@acme.test'];
    const res = await h.submit(h.liveKey, { emails, notify_email: false });
    expect(res.statusCode).toBe(202);
    const jobId = res.json<{ job_id: string }>().job_id;
    await h.drain();
    const rows = (await h.results(h.liveKey, jobId, 'json')).json<ResultsJson>().results;
    expect(rows.map((r) => r.status)).toEqual(['deliverable', 'deliverable', 'undeliverable']);
    // user7 came from the cache: the job never asked the MTA about it.
    expect(rcptsFor('user7@acme.test')).toBe(1);
    expect(rcptsFor('user8@acme.test')).toBe(1);

    // What the job found out answers the next single verification.
    expect(await verify(h, { email: 'user8@acme.test' })).toMatchObject({
      status: 'deliverable',
      cached: true,
    });
    expect(await verify(h, { email: 'nobody@acme.test' })).toMatchObject({
      status: 'undeliverable',
      cached: true,
    });
    expect(rcptsFor('user8@acme.test')).toBe(1);
  });

  it("does not answer one account's job from another account's verifications", async () => {
    await verify(h, { email: 'user9@acme.test' });
    const other = await h.createOtherAccount();
    const res = await h.submit(other.liveKey, { emails: ['user9@acme.test'], notify_email: false });
    expect(res.statusCode).toBe(202);
    await h.drain();
    expect(rcptsFor('user9@acme.test')).toBe(2);
  });
});

describe('the cache in Redis, shared by two service instances', () => {
  const skip = skipWithoutRedis('result cache shared through Redis');
  let redis: TestRedis;
  let h: Harness;
  afterAll(async () => {
    await h?.close();
    await redis?.close();
  });

  it.skipIf(skip)('answers on one instance what the other probed, without an SMTP session', async () => {
    redis = testRedis();
    const clock = new ManualClock('2026-03-10T12:00:00.000Z');
    const flags = { smtpPort: String(kit.port), redisUrl: TEST_REDIS_URL, redisKeyPrefix: redis.prefix };
    h = await createHarness({ clock, flags });
    route(h);
    // A second API process: its own store connection, engine and Redis connection, same settings.
    const runtime = await createRuntime(h.runtime.ctx.config, { clock, logger: h.runtime.ctx.logger });
    const app = buildApp(runtime.ctx);
    try {
      const first = await verify(h, { email: 'user10@acme.test' });
      expect(first.cached).toBe(false);
      const sessions = mta().connections;
      const res = await app.inject({
        method: 'POST',
        url: '/v1/verify',
        headers: { authorization: `Bearer ${h.liveKey}` },
        payload: { email: 'user10@acme.test' },
      });
      expect(res.json()).toMatchObject({ status: 'deliverable', cached: true, checked_at: first.checked_at });
      expect(mta().connections).toBe(sessions);
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});

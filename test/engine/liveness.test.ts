/**
 * Issue 10, part 1: every verification ends. A mail host that fails at any stage of the dialogue
 * (banner, EHLO, STARTTLS, MAIL, RCPT, RSET, QUIT) with any failure (4xx, 5xx, 421, a close, a
 * reset, silence, garbage) counts against itself, is backed off and, after `maxHostFailures`
 * failures in a row, has its addresses settled as unknown, through real sockets to scripted
 * hosts on 127.0.7.x (test/kit/liveness-mta.ts).
 */
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { batchEngineOptions, loadConfig } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import { createVerifier } from '../../src/engine/verifier.js';
import { createChunkVerifier, type ChunkVerifier } from '../../src/services/batches/chunk-verifier.js';
import { createJobMetrics } from '../../src/jobs/job-metrics.js';
import { createJobsHarness } from '../kit/jobs-kit.js';
import type { BatchEngineObserver, BatchEngineOptions } from '../../src/engine/batch/types.js';
import type { VerificationResult } from '../../src/engine/types.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { Behaviour, ScriptedMtas, SessionScript, Stage } from '../kit/liveness-mta.js';
import { startScriptedMtas } from '../kit/liveness-mta.js';

const MX = '127.0.7.1';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Settings of these tests: short steps and back-offs, so that a host is given up quickly. */
const TUNING = {
  timeoutMs: 150,
  hostBackoffMs: 20,
  hostBackoffMaxMs: 80,
  maxHostFailures: 3,
  perHostConcurrency: 2,
  greylistRetries: 0,
  greylistDelayMs: 10,
  // Small transactions and sessions, so that RSET and QUIT are reached with a few addresses.
  recipientsPerTransaction: 2,
  recipientsPerSession: 4,
} satisfies Partial<BatchEngineOptions>;

interface World {
  mtas: ScriptedMtas;
  dns: FakeDnsServer;
  options: BatchEngineOptions;
}

async function world(
  hosts: Record<string, SessionScript[]>,
  domains: Record<string, string[]>,
): Promise<World> {
  const mtas = await startScriptedMtas(hosts);
  const dns = await startDnsServer();
  cleanups.push(
    () => mtas.close(),
    () => dns.close(),
  );
  for (const ip of Object.keys(hosts)) dns.setDomain(`mx-${ip}.test`, { a: [ip] });
  for (const [domain, ips] of Object.entries(domains)) {
    dns.setDomain(domain, {
      mx: ips.map((ip, i) => ({ exchange: `mx-${ip}.test`, priority: 10 * (i + 1) })),
    });
  }
  const config = loadConfig(
    { dnsServer: dns.address, smtpPort: String(mtas.port), allowInternalTargets: 'true' },
    {},
  );
  return { mtas, dns, options: { ...config.engine, concurrency: 10, ...TUNING } };
}

/** Rejects with a clear message when `promise` has not settled after `ms`. */
async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function tally(results: VerificationResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results)
    out[`${r.status}/${r.reason ?? '-'}`] = (out[`${r.status}/${r.reason ?? '-'}`] ?? 0) + 1;
  return out;
}

const addresses = (domain: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `user${i}@${domain}`);

describe('a host that greets and then answers 421 to MAIL FROM', () => {
  it('is given up after maxHostFailures sessions spaced by its back-off: the batch ends, every address unknown', async () => {
    const w = await world({ [MX]: [{ stages: { mail: '421' } }] }, { 'busy.test': [MX] });
    const givenUp: { host: string; reason: string; stage: string | undefined }[] = [];
    const observer: BatchEngineObserver = {
      onHostGivenUp: (host, _egress, reason, details) =>
        void givenUp.push({ host, reason, stage: details?.stage }),
    };
    const engine = createBatchEngine(w.options, { observer });
    cleanups.push(() => engine.close());

    // Before the fix the greeting counted as a success and reset the host's failure streak, so
    // the engine reconnected after every back-off, for ever.
    const results = await within(5_000, engine.verifyMany(addresses('busy.test', 6)), 'verifyMany');

    expect(tally(results)).toEqual({ 'unknown/smtp_unavailable': 6 });
    expect(results[0]!.checks.smtp.message).toContain('421');
    const sessions = w.mtas.host(MX).sessions;
    expect(sessions).toHaveLength(TUNING.maxHostFailures);
    // Each new session waited out the back-off of the failure before it (20 ms, then 40 ms).
    for (let i = 1; i < sessions.length; i++) {
      expect(sessions[i]!.acceptedAt - sessions[i - 1]!.acceptedAt).toBeGreaterThanOrEqual(
        TUNING.hostBackoffMs * 2 ** (i - 1) - 5,
      );
    }
    expect(givenUp).toEqual([{ host: MX, reason: 'unavailable', stage: 'mail' }]);
  });
});

describe('the greeting, one module for the single probe and the batch sessions', () => {
  it('greets a host whose TLS handshake breaks once more in clear text, in both', async () => {
    const w = await world({ [MX]: [{ offerTls: true, brokenTls: true }] }, { 'tls.test': [MX] });
    const engine = createBatchEngine(w.options);
    const verifier = createVerifier(w.options);
    cleanups.push(
      () => engine.close(),
      () => verifier.close(),
    );
    const batch = await within(5_000, engine.verifyMany(['user0@tls.test', 'nobody@tls.test']), 'verifyMany');
    expect(batch.map((r) => r.status)).toEqual(['deliverable', 'undeliverable']);
    expect(batch[0]!.checks.smtp.tls).toBe(false);
    const single = await verifier.verify('user1@tls.test', { timeoutMs: 1_000 });
    expect(single).toMatchObject({ status: 'deliverable', checks: { smtp: { tls: false } } });
    // Each session: the broken handshake, then the same greeting in clear text.
    const sessions = w.mtas.host(MX).sessions;
    expect(sessions.map((s) => s.brokenTls)).toEqual([true, false, true, false]);
    expect(sessions.map((s) => s.commands.filter((c) => c.startsWith('EHLO')).length)).toEqual([1, 1, 1, 1]);
  });
});

describe('the per-host cap, as the server counts connections', () => {
  // Issue 20: a connection counts for the server until it has let go of it. The clear-text retry
  // after a broken TLS handshake, or the next session after one the client ended, must not open
  // before the server has read the end of the one before.
  it.each([
    ['the server closes after breaking TLS', true],
    ['the server waits for the client after breaking TLS', 'waits'],
  ] as const)('keeps to one connection at a time when %s', async (_, brokenTls) => {
    const w = await world(
      { [MX]: [{ offerTls: true, brokenTls }, { stages: { ehlo: 'garbage' } }, {}] },
      { 'cap.test': [MX] },
    );
    const engine = createBatchEngine({ ...w.options, perHostConcurrency: 1, itemsPerSession: 1 });
    const verifier = createVerifier(w.options);
    cleanups.push(
      () => engine.close(),
      () => verifier.close(),
    );
    const emails = ['user1@cap.test', 'user2@cap.test', 'nobody@cap.test', 'user3@cap.test'];
    const results = await within(10_000, engine.verifyMany(emails), 'verifyMany');
    expect(results).toHaveLength(emails.length);
    expect(w.mtas.host(MX).sessions.length).toBeGreaterThanOrEqual(3);
    expect(w.mtas.host(MX).peakConcurrent).toBe(1);
    // A single verification's retry in clear text too.
    await verifier.verify('user4@cap.test', { timeoutMs: 2_000 });
    expect(w.mtas.host(MX).peakConcurrent).toBe(1);
  });
});

/** The ways a stage can fail (test/kit/liveness-mta.ts), and 'split': a normal reply in two packets. */
const HOW: readonly Behaviour[] = ['split', '4xx', '5xx', '421', 'close', 'reset', 'silence', 'garbage'];

/**
 * Whether a host that answers `stage` so in every session still answers about recipients:
 * a split reply is a normal one; QUIT comes after the answers; a failed RSET sends its recipients
 * to a new session, which needs none; STARTTLS refused with 4xx/5xx goes on in clear text; 4xx/5xx
 * to RCPT are answers (greylisted, a policy refusal), unknown but not a host failure.
 */
function answersRecipients(stage: Stage, how: Behaviour): boolean {
  if (how === 'split' || stage === 'quit' || stage === 'rset') return true;
  return stage === 'starttls' && (how === '4xx' || how === '5xx');
}

/**
 * A host that fails so is given up (the observer hears of it), rather than answering about
 * recipients. A 4xx to RCPT is an answer (greylisted); a 4xx to MAIL FROM makes each recipient
 * greylisted (no retries in these tests); policy refusals at RCPT (5.7.1) three in a row are a
 * refusal of the prober: given up.
 */
function givenUp(stage: Stage, how: Behaviour): boolean {
  if (answersRecipients(stage, how)) return false;
  return !((stage === 'rcpt' || stage === 'mail') && how === '4xx');
}

const STAGE_LIST: readonly Stage[] = ['banner', 'ehlo', 'starttls', 'mail', 'rcpt', 'rset', 'quit'];

describe.each(STAGE_LIST)('a host that fails at %s, in every way, in every session', (stage) => {
  /** One host per way of failing, 127.0.7.10 onwards; domain `<way>.test` is served by it. */
  const hostIp = (i: number): string => `127.0.7.${10 + i}`;
  const domainOf = (how: Behaviour): string => `${how}.test`;
  const emailsOf = (how: Behaviour): string[] => [
    `user0@${domainOf(how)}`,
    `user1@${domainOf(how)}`,
    `nobody0@${domainOf(how)}`,
  ];

  async function stageWorld(): Promise<World> {
    const hosts = Object.fromEntries(
      HOW.map((how, i) => [hostIp(i), [{ stages: { [stage]: how }, offerTls: stage === 'starttls' }]]),
    );
    const domains = Object.fromEntries(HOW.map((how, i) => [domainOf(how), [hostIp(i)]]));
    return world(hosts, domains);
  }

  it('verifyMany ends, answers each address once, unknown where the host failed, and gives the host up', async () => {
    const w = await stageWorld();
    const events: { host: string; stage: string | undefined }[] = [];
    const engine = createBatchEngine(w.options, {
      observer: {
        onHostGivenUp: (host, _egress, _reason, details) => void events.push({ host, stage: details?.stage }),
      },
    });
    cleanups.push(() => engine.close());
    const emails = HOW.flatMap(emailsOf);
    const reported = new Map<number, number>();

    // maxHostFailures sessions of at most 2 × 4 greeting steps, 2 groups and QUIT, with their back-offs.
    const { timeoutMs, maxHostFailures, hostBackoffMaxMs } = TUNING;
    const bound = maxHostFailures * ((8 + 2 + 1) * timeoutMs + hostBackoffMaxMs) + 2_000;
    const results = await within(
      bound,
      engine.verifyMany(emails, { onResult: (i) => void reported.set(i, (reported.get(i) ?? 0) + 1) }),
      'verifyMany',
    );

    expect(results.map((r) => r.email)).toEqual(emails);
    expect([...reported.values()].every((n) => n === 1) && reported.size === emails.length).toBe(true);
    HOW.forEach((how, i) => {
      const rows = results.slice(3 * i, 3 * i + 3);
      const label = `${stage} ${how}`;
      if (answersRecipients(stage, how)) {
        expect(
          rows.map((r) => r.status),
          label,
        ).toEqual(['deliverable', 'deliverable', 'undeliverable']);
      } else {
        expect(
          rows.map((r) => r.status),
          label,
        ).toEqual(['unknown', 'unknown', 'unknown']);
        expect(w.mtas.host(hostIp(i)).sessions.length, label).toBeLessThanOrEqual(maxHostFailures);
      }
      expect(w.mtas.host(hostIp(i)).peakConcurrent, label).toBeLessThanOrEqual(TUNING.perHostConcurrency);
      const given = events.filter((e) => e.host === hostIp(i));
      // Garbage in a pipelined group fails the whole read it came in: MAIL FROM's reply with it.
      const stageSeen = stage === 'rcpt' && how === 'garbage' ? 'mail' : stage;
      expect(given, label).toEqual(givenUp(stage, how) ? [{ host: hostIp(i), stage: stageSeen }] : []);
    });
  });

  it('verify ends within its budget with one honest answer, after at most one greeting in clear text more', async () => {
    const w = await stageWorld();
    const verifier = createVerifier(w.options);
    cleanups.push(() => verifier.close());
    const timeoutMs = 400;
    const results = await within(
      timeoutMs + 2_000,
      Promise.all(HOW.map((how) => verifier.verify(`user0@${domainOf(how)}`, { timeoutMs }))),
      'verify',
    );
    HOW.forEach((how, i) => {
      const label = `${stage} ${how}`;
      // A single probe sends no RSET, and does not wait for the server's close after QUIT.
      expect(results[i]!.status, label).toBe(answersRecipients(stage, how) ? 'deliverable' : 'unknown');
      expect(w.mtas.host(hostIp(i)).sessions.length, label).toBe(1);
    });
  });
});

describe('a host given up during a job', () => {
  it('is counted on /metrics by failure and stage, and the log line names the job', async () => {
    const mtas = await startScriptedMtas({ [MX]: [{ stages: { mail: '421' } }] });
    cleanups.push(() => mtas.close());
    const bound: { verify?: ChunkVerifier } = {};
    const h = await createJobsHarness({
      flags: { smtpPort: String(mtas.port), allowInternalTargets: 'true' },
      account: { plan: 'starter' },
      verifyChunk: (...args) => bound.verify!(...args),
    });
    cleanups.push(() => h.close());
    h.dns.setDomain('mx.busy.test', { a: [MX] });
    h.dns.setDomain('busy.test', { mx: [{ exchange: 'mx.busy.test', priority: 10 }] });
    const registry = new Registry();
    const metrics = createJobMetrics(registry, h.runtime.ctx.db, h.clock);
    const warnings: Record<string, unknown>[] = [];
    const { ctx } = h.runtime;
    const engine = createBatchEngine(
      { ...batchEngineOptions(ctx.config), ...TUNING },
      {
        observer: metrics.engineObserver,
        logger: { warn: (obj) => void warnings.push(obj as Record<string, unknown>) },
      },
    );
    cleanups.push(() => engine.close());
    bound.verify = createChunkVerifier({
      verifier: ctx.verifier,
      dnsTrust: ctx.dnsTrust,
      batchEngine: engine,
      testDomain: ctx.config.testDomain,
      testModeChunkDelayMs: 0,
    });

    const emails = addresses('busy.test', 4);
    const submitted = await h.submit(h.liveKey, { emails, notify_email: false });
    const jobId = submitted.json<{ job_id: string }>().job_id;
    expect(await within(10_000, h.drain(), 'the job')).toBe(1);

    expect((await h.job(h.liveKey, jobId)).json()).toMatchObject({ status: 'completed', processed: 4 });
    const counter = await registry.getSingleMetric('mailverdict_smtp_hosts_given_up_total')!.get();
    expect(counter.values).toEqual([{ labels: { reason: 'unavailable', stage: 'mail' }, value: 1 }]);
    const settled = await registry.getSingleMetric('mailverdict_smtp_given_up_addresses_total')!.get();
    // The four addresses and the domain's catch-all probe.
    expect(settled.values[0]!.value).toBe(5);
    expect(warnings).toEqual([
      expect.objectContaining({ address: MX, failure: 'unavailable', stage: 'mail', calls: [jobId] }),
    ]);
  });
});

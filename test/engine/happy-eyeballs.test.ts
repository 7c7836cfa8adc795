/**
 * Happy Eyeballs (RFC 8305) in a single verification's connect (src/engine/net/happy-eyeballs.ts):
 * an MX host with A and AAAA records where one family's connect never completes still answers,
 * and the rest of the race's rules: one family only, both working (the preferred one wins), every
 * address failing (an honest unknown, never undeliverable), a warm session to the address that won.
 * Batch sessions (src/engine/batch/pooled-session.ts) race the same way.
 *
 * A connect that never completes is made with real sockets (test/kit/blackhole.ts): a stopped
 * listener whose accept queue is full, so that the kernel drops the SYNs.
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import type { EngineOptions, Verifier } from '../../src/engine/index.js';
import { createBatchEngine, createVerifier } from '../../src/engine/index.js';
import { interleaveFamilies } from '../../src/engine/net/happy-eyeballs.js';
import type { Blackhole } from '../kit/blackhole.js';
import { startBlackhole } from '../kit/blackhole.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import type { PostfixLikeMta } from '../kit/postfix-like-mta.js';
import { startPostfixLikeMta } from '../kit/postfix-like-mta.js';

let dns: FakeDnsServer;
/** A mail host on ::1 only, one on 127.0.0.1 only, one on both (each its own port). */
let mta6: PostfixLikeMta;
let mta4: PostfixLikeMta;
let mtaBoth: PostfixLikeMta;
const holes: Blackhole[] = [];
const verifiers: Verifier[] = [];
const batches: BatchEngine[] = [];

const rcpt = (address: string): string =>
  address.startsWith('user')
    ? '250 2.1.5 Ok'
    : `550 5.1.1 <${address}>: Recipient address rejected: User unknown`;

beforeAll(async () => {
  [mta6, mta4, mtaBoth] = await Promise.all([
    startPostfixLikeMta({ hosts: ['::1'], inFlowDelayMs: 0, rcpt }),
    startPostfixLikeMta({ hosts: ['127.0.0.1'], inFlowDelayMs: 0, rcpt }),
    startPostfixLikeMta({ hosts: ['::1', '127.0.0.1'], inFlowDelayMs: 0, rcpt }),
  ]);
  dns = await startDnsServer({
    'dual.test': { mx: [{ exchange: 'mx.dual.test', priority: 10 }] },
    'mx.dual.test': { a: ['127.0.0.1'], aaaa: ['::1'] },
    'v6only.test': { mx: [{ exchange: 'mx.v6only.test', priority: 10 }] },
    'mx.v6only.test': { aaaa: ['::1'] },
    'v4only.test': { mx: [{ exchange: 'mx.v4only.test', priority: 10 }] },
    'mx.v4only.test': { a: ['127.0.0.1'] },
    'late.test': { mx: [{ exchange: 'mx.late.test', priority: 10 }] },
    'mx.late.test': { a: ['127.0.0.1'], aaaa: ['::1'] },
  });
  // Port P of mta6 hangs on 127.0.0.1, port P of mta4 hangs on ::1.
  holes.push(await startBlackhole(['127.0.0.1'], mta6.port), await startBlackhole(['::1'], mta4.port));
});

afterEach(async () => {
  await Promise.all([...verifiers.splice(0), ...batches.splice(0)].map((v) => v.close()));
});

afterAll(async () => {
  for (const hole of holes) hole.close();
  await Promise.all([mta6.close().catch(() => undefined), mta4.close(), mtaBoth.close(), dns.close()]);
});

function verifier(port: number, smtp: Partial<EngineOptions['smtp']> = {}): Verifier {
  const options = kitEngineOptions(dns.address, port);
  const v = createVerifier({ ...options, smtp: { ...options.smtp, sessions: { idleMs: 5_000 }, ...smtp } });
  verifiers.push(v);
  return v;
}

// A budget far above what a verification takes here, so that a loaded machine does not run it out.
const TIMEOUT_MS = 15_000;

describe('Happy Eyeballs (RFC 8305)', () => {
  it('interleaves the families, IPv6 first unless IPv4 is preferred', () => {
    const addresses = ['192.0.2.1', '192.0.2.2', '2001:db8::1', '2001:db8::2', '192.0.2.3'];
    expect(interleaveFamilies(addresses)).toEqual([
      '2001:db8::1',
      '192.0.2.1',
      '2001:db8::2',
      '192.0.2.2',
      '192.0.2.3',
    ]);
    expect(interleaveFamilies(addresses, false)).toEqual([
      '192.0.2.1',
      '2001:db8::1',
      '192.0.2.2',
      '2001:db8::2',
      '192.0.2.3',
    ]);
  });

  it('answers through IPv6 when the IPv4 connect never completes, IPv4 tried first', async () => {
    const v = verifier(mta6.port, { preferIpv4: true });
    const result = await v.verify('user1@dual.test', { timeoutMs: TIMEOUT_MS, transcript: true });
    expect(result.status).toBe('deliverable');
    // One connection raced both families (the old code connected to the silent one alone and
    // spent the budget there).
    const lines = result.transcript!.map((l) => l.text);
    expect(lines).toContain(`[connect mx.dual.test (127.0.0.1, then ::1) port ${mta6.port}]`);
    expect(lines).toContain('[connected to ::1]');
  });

  it('answers through IPv4 when the IPv6 connect never completes, IPv6 tried first', async () => {
    const v = verifier(mta4.port);
    const result = await v.verify('user1@dual.test', { timeoutMs: TIMEOUT_MS, transcript: true });
    expect(result.status).toBe('deliverable');
    const lines = result.transcript!.map((l) => l.text);
    expect(lines).toContain(`[connect mx.dual.test (::1, then 127.0.0.1) port ${mta4.port}]`);
    expect(lines).toContain('[connected to 127.0.0.1]');
  });

  it('keeps the session of the address that won warm for the next verification', async () => {
    const before = mta4.stats().sessionsByHost['127.0.0.1'] ?? 0;
    const v = verifier(mta4.port);
    const first = await v.verify('user1@dual.test', { timeoutMs: TIMEOUT_MS });
    const second = await v.verify('user2@dual.test', { timeoutMs: TIMEOUT_MS, transcript: true });
    expect([first.status, second.status]).toEqual(['deliverable', 'deliverable']);
    expect(mta4.stats().sessionsByHost['127.0.0.1']! - before).toBe(1);
    expect(second.transcript!.map((l) => l.text)).toContain('[reuse mx.dual.test (127.0.0.1)]');
  });

  it('puts the family that won at a host first for the next new connection there', async () => {
    // No warm sessions: every verification connects anew.
    const v = verifier(mta4.port, { sessions: { idleMs: 0 } });
    const first = await v.verify('user1@dual.test', { timeoutMs: TIMEOUT_MS, transcript: true });
    const second = await v.verify('user2@dual.test', { timeoutMs: TIMEOUT_MS, transcript: true });
    expect([first.status, second.status]).toEqual(['deliverable', 'deliverable']);
    expect(first.transcript!.map((l) => l.text)).toContain('[connected to 127.0.0.1]');
    expect(second.transcript!.map((l) => l.text)).toContain(
      `[connect mx.dual.test (127.0.0.1, then ::1) port ${mta4.port}]`,
    );
  });

  it('uses the preferred family when both answer, and connects once', async () => {
    mtaBoth.resetStats();
    const v = verifier(mtaBoth.port);
    const result = await v.verify('user1@dual.test', { timeoutMs: TIMEOUT_MS });
    expect(result.status).toBe('deliverable');
    expect(mtaBoth.stats().sessionsByHost).toEqual({ '::1': 1 });
    expect(mtaBoth.stats().connections).toBe(1);
  });

  it('connects to an IPv6-only and an IPv4-only host without a race', async () => {
    mtaBoth.resetStats();
    const v = verifier(mtaBoth.port);
    const six = await v.verify('user1@v6only.test', { timeoutMs: TIMEOUT_MS, transcript: true });
    const four = await v.verify('user1@v4only.test', { timeoutMs: TIMEOUT_MS, transcript: true });
    expect([six.status, four.status]).toEqual(['deliverable', 'deliverable']);
    expect(mtaBoth.stats().sessionsByHost).toEqual({ '::1': 1, '127.0.0.1': 1 });
    expect(six.transcript!.map((l) => l.text)).toContain(
      `[connect mx.v6only.test (::1) port ${mtaBoth.port}]`,
    );
  });

  it('reports unknown, never undeliverable, when every address refuses', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const v = verifier(port);
    const result = await v.verify('user1@dual.test', { timeoutMs: TIMEOUT_MS });
    expect(result.status).toBe('unknown');
    expect(result.reason).toBe('smtp_unavailable');
  });

  it('reports unknown when one family hangs and the other refuses', async () => {
    // Port of mta6 hangs on 127.0.0.1; a verifier with IPv4 first on a port where ::1 refuses.
    const v = verifier(mta6.port, { preferIpv4: true });
    await mta6.close();
    const result = await v.verify('user1@dual.test', { timeoutMs: 1_500 });
    expect(result.status).toBe('unknown');
    expect(['smtp_unavailable', 'smtp_timeout']).toContain(result.reason);
  });
});

describe('Resolution Delay (RFC 8305 §3)', () => {
  afterEach(() => {
    dns.setTypeDelay('A', 0);
    dns.setTypeDelay('AAAA', 0);
  });

  it('starts with IPv4 50 ms after the A answer when the AAAA answer is late', async () => {
    // Far above the Resolution Delay, whatever the machine's load; a DNS timeout above it too:
    // the old code waited for the AAAA answer and then raced both families.
    dns.setTypeDelay('AAAA', 3_000);
    const options = kitEngineOptions(dns.address, mta4.port);
    const v = createVerifier({ ...options, dns: { ...options.dns, timeoutMs: 5_000 } });
    verifiers.push(v);
    const result = await v.verify('user1@late.test', { timeoutMs: TIMEOUT_MS, transcript: true });
    expect(result.status).toBe('deliverable');
    // IPv4 alone: the connection went out before the AAAA answer came.
    expect(result.transcript!.map((l) => l.text)).toContain(
      `[connect mx.late.test (127.0.0.1) port ${mta4.port}]`,
    );
  });

  it('starts with IPv6 at once when the AAAA answer comes first, and races IPv4 when the A answer comes', async () => {
    // IPv6 hangs at mta4's port: the late IPv4 address joins the race and wins.
    dns.setTypeDelay('A', 150);
    const v = verifier(mta4.port);
    const result = await v.verify('user1@late.test', { timeoutMs: TIMEOUT_MS, transcript: true });
    expect(result.status).toBe('deliverable');
    const lines = result.transcript!.map((l) => l.text);
    expect(lines).toContain(`[connect mx.late.test (::1) port ${mta4.port}]`);
    expect(lines).toContain('[then 127.0.0.1]');
    expect(lines).toContain('[connected to 127.0.0.1]');
  });

  it('waits up to the Resolution Delay for the AAAA answer, then races both families, IPv6 first', async () => {
    dns.setTypeDelay('AAAA', 20);
    mtaBoth.resetStats();
    // A delay far above the AAAA answer's 20 ms, so that a loaded machine cannot turn it late.
    const options = kitEngineOptions(dns.address, mtaBoth.port);
    const v = createVerifier(
      { ...options, smtp: { ...options.smtp, sessions: { idleMs: 5_000 } } },
      { resolutionDelayMs: 2_000 },
    );
    verifiers.push(v);
    const result = await v.verify('user1@late.test', { timeoutMs: TIMEOUT_MS, transcript: true });
    expect(result.status).toBe('deliverable');
    expect(result.transcript!.map((l) => l.text)).toContain(
      `[connect mx.late.test (::1, then 127.0.0.1) port ${mtaBoth.port}]`,
    );
    expect(mtaBoth.stats().sessionsByHost).toEqual({ '::1': 1 });
  });
});

/** A batch engine with a per-host cap of `cap` and a step timeout well above the attempt delay. */
function batchEngine(port: number, smtp: Partial<EngineOptions['smtp']> = {}, cap = 2): BatchEngine {
  const options = kitEngineOptions(dns.address, port);
  const engine = createBatchEngine({
    ...options,
    smtp: { ...options.smtp, ...smtp },
    concurrency: 10,
    perHostConcurrency: cap,
    greylistRetries: 0,
    greylistDelayMs: 10,
    // Far above any test's time (60 s): a session left waiting at the silent family fails the test.
    timeoutMs: 120_000,
    recipientsPerTransaction: 5,
    recipientsPerSession: 10,
  });
  batches.push(engine);
  return engine;
}

const LIST = Array.from({ length: 40 }, (_, i) =>
  i % 4 === 3 ? `nobody${i}@dual.test` : `user${i}@dual.test`,
);
const expected = LIST.map((address) => (address.startsWith('user') ? 'deliverable' : 'undeliverable'));

describe('Happy Eyeballs in batch sessions', () => {
  /** On ::1 only; its port hangs on 127.0.0.1 (the tests above close mta6). */
  let batch6: PostfixLikeMta;
  beforeAll(async () => {
    batch6 = await startPostfixLikeMta({ hosts: ['::1'], inFlowDelayMs: 0, rcpt });
    holes.push(await startBlackhole(['127.0.0.1'], batch6.port));
  });
  afterAll(() => batch6.close());

  it('verifies a batch through IPv6 when the IPv4 connect never completes', async () => {
    // The resolver lists IPv4 first; a batch session used to connect there alone and time out.
    batch6.resetStats();
    const results = await batchEngine(batch6.port).verifyMany(LIST);
    expect(results.map((r) => r.status)).toEqual(expected);
    expect(Object.keys(batch6.stats().sessionsByHost)).toEqual(['::1']);
  });

  it('costs a batch one Connection Attempt Delay when the family tried first hangs', async () => {
    batch6.resetStats();
    const startedAt = performance.now();
    const results = await batchEngine(batch6.port, { preferIpv4: true }).verifyMany(LIST);
    const elapsed = performance.now() - startedAt;
    expect(results.map((r) => r.status)).toEqual(expected);
    // At least the 250 ms of one Connection Attempt Delay for the silent family; never its step
    // timeout (120 s, past the test's own time).
    expect(elapsed).toBeGreaterThan(250);
    expect(Object.keys(batch6.stats().sessionsByHost)).toEqual(['::1']);
  });

  it('races the family whose DNS answer came late, as a single verification does', async () => {
    // IPv4 (answered first) hangs at batch6's port; the AAAA answer comes 300 ms later and wins.
    dns.setTypeDelay('AAAA', 300, 'mx.late.test');
    try {
      const options = kitEngineOptions(dns.address, batch6.port);
      const engine = createBatchEngine({
        ...options,
        dns: { ...options.dns, timeoutMs: 2_000 },
        concurrency: 10,
        perHostConcurrency: 2,
        greylistRetries: 0,
        greylistDelayMs: 10,
        timeoutMs: 120_000,
      });
      batches.push(engine);
      const list = ['user1@late.test', 'nobody@late.test', 'user2@late.test'];
      // The AAAA answer's 300 ms, never the step timeout (120 s) at the silent IPv4 address.
      const results = await engine.verifyMany(list);
      expect(results.map((r) => r.status)).toEqual(['deliverable', 'undeliverable', 'deliverable']);
    } finally {
      dns.setTypeDelay('AAAA', 0, 'mx.late.test');
    }
  });

  it('counts the sessions at the address that won: never more than the cap there', async () => {
    // The queue is the IPv4 address's (listed first); every session wins on ::1 and is counted there.
    batch6.resetStats();
    const many = Array.from({ length: 200 }, (_, i) => `user${i}@dual.test`);
    const results = await batchEngine(batch6.port, {}, 2).verifyMany(many);
    expect(new Set(results.map((r) => r.status))).toEqual(new Set(['deliverable']));
    const stats = batch6.stats();
    expect(Object.keys(stats.sessionsByHost)).toEqual(['::1']);
    // 200 recipients at 10 a session: many sessions, at most 2 at once at the address that won.
    expect(stats.sessionsByHost['::1']).toBeGreaterThanOrEqual(20);
    expect(stats.peakConcurrentByHost['::1']).toBe(2);
  });
});

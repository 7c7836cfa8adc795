/**
 * The batch engine through real sockets: loopback fake MTAs (test/kit/pipelining-mta.ts, a
 * scripted `net` responder that counts connections, reads and concurrent sessions) on
 * 127.0.3.x and the in-process DNS server. Every assertion is about what the servers saw or
 * what the engine returned, never about timing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine, BatchEngineOptions } from '../../src/engine/batch/types.js';
import type { VerificationResult } from '../../src/engine/types.js';
import { createVerifier } from '../../src/engine/verifier.js';
import type { FakeMta, FakeMtaOptions } from '../kit/pipelining-mta.js';
import { startFakeMta } from '../kit/pipelining-mta.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { MtaScript } from '../kit/smtp-servers.js';
import { REPLIES, startSmtpServers } from '../kit/smtp-servers.js';
import { WAIT_FOR } from '../kit/wait-for.js';

const HOSTS = ['127.0.3.1', '127.0.3.2', '127.0.3.3'];
/** Nothing listens here on the test port: connections are refused. */
const DEAD_HOST = '127.0.3.99';

/** Mailboxes: local parts starting with "user"; everything else is unknown. */
const mailboxes = (address: string): string =>
  address.startsWith('user') ? '250 2.1.5 OK' : '550 5.1.1 <' + address + '>: User unknown';

interface World {
  mta: FakeMta;
  dns: FakeDnsServer;
  engine(overrides?: Partial<BatchEngineOptions>, logger?: { warn(obj: object): void }): BatchEngine;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Starts the MTAs and DNS: `mx0.test` -> 127.0.3.1, `mx1.test` -> 127.0.3.2, ...; domains map
 * to MX host indexes in preference order.
 */
async function world(domains: Record<string, number[]>, mta: Partial<FakeMtaOptions> = {}): Promise<World> {
  const server = await startFakeMta({ hosts: HOSTS, rcpt: mailboxes, record: true, ...mta });
  const dns = await startDnsServer();
  cleanups.push(
    () => server.close(),
    () => dns.close(),
  );
  HOSTS.forEach((ip, i) => dns.setDomain(`mx${i}.test`, { a: [ip] }));
  dns.setDomain('dead-mx.test', { a: [DEAD_HOST] });
  for (const [domain, hosts] of Object.entries(domains)) {
    dns.setDomain(domain, {
      mx: hosts.map((h, i) => ({ exchange: h < 0 ? 'dead-mx.test' : `mx${h}.test`, priority: 10 * (i + 1) })),
    });
  }
  const config = loadConfig(
    { dnsServer: dns.address, smtpPort: String(server.port), allowInternalTargets: 'true' },
    {},
  );
  return {
    mta: server,
    dns,
    engine: (overrides = {}, logger) => {
      const engine = createBatchEngine(
        {
          ...config.engine,
          concurrency: 20,
          perHostConcurrency: 5,
          greylistRetries: 2,
          greylistDelayMs: 20,
          timeoutMs: 2000,
          hostBackoffMs: 10,
          ...overrides,
        },
        logger ? { logger } : {},
      );
      cleanups.push(() => engine.close());
      return engine;
    },
  };
}

function addresses(domain: string, count: number, local = 'user'): string[] {
  return Array.from({ length: count }, (_, i) => `${local}${i}@${domain}`);
}

function tally(results: VerificationResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results)
    out[`${r.status}/${r.reason ?? '-'}`] = (out[`${r.status}/${r.reason ?? '-'}`] ?? 0) + 1;
  return out;
}

/** RCPT lines of every recorded session, per transaction (split at MAIL FROM). */
function transactions(mta: FakeMta): string[][] {
  const out: string[][] = [];
  for (const session of mta.stats().sessions) {
    for (const line of session.commands) {
      if (line.startsWith('MAIL FROM')) out.push([]);
      else if (line.startsWith('RCPT TO')) out[out.length - 1]?.push(line);
    }
  }
  return out;
}

describe('batch engine: connection reuse and pipelining', () => {
  it('verifies many addresses of one domain over a few reused connections', async () => {
    const w = await world({ 'one.test': [0] });
    const emails = addresses('one.test', 60);
    const results = await w.engine().verifyMany(emails);
    expect(tally(results)).toEqual({ 'deliverable/-': 60 });
    const stats = w.mta.stats();
    expect(stats.connections).toBeLessThanOrEqual(2);
    // 60 recipients and one catch-all probe: every address is asked exactly once.
    expect(stats.rcpts).toBe(61);
    // And the domain's MX was looked up once.
    expect(w.dns.queryCount('one.test', 'MX')).toBe(1);
  });

  it('sends several RCPTs in one write when the server offers PIPELINING', async () => {
    const w = await world({ 'one.test': [0] });
    await w.engine().verifyMany(addresses('one.test', 40));
    const stats = w.mta.stats();
    expect(stats.maxRcptsPerRead).toBeGreaterThan(1);
    expect(stats.rcptReads).toBeLessThan(stats.rcpts / 2);
  });

  it('sends one RCPT per round trip, on the same session, when PIPELINING is not offered', async () => {
    const w = await world({ 'one.test': [0] }, { pipelining: false });
    const results = await w.engine().verifyMany(addresses('one.test', 30));
    expect(tally(results)).toEqual({ 'deliverable/-': 30 });
    const stats = w.mta.stats();
    expect(stats.maxRcptsPerRead).toBe(1);
    expect(stats.connections).toBe(1);
  });

  it('starts a new transaction with RSET after the per-transaction bound', async () => {
    const w = await world({ 'one.test': [0] });
    await w.engine({ recipientsPerTransaction: 5 }).verifyMany(addresses('one.test', 22));
    const stats = w.mta.stats();
    expect(stats.rsets).toBeGreaterThanOrEqual(3);
    for (const rcpts of transactions(w.mta)) expect(rcpts.length).toBeLessThanOrEqual(5);
    const commands = stats.sessions.flatMap((s) => s.commands);
    const rset = commands.indexOf('RSET');
    expect(commands[rset + 1]).toMatch(/^MAIL FROM:/);
  });

  it('opens a new session after the per-session RCPT bound', async () => {
    const w = await world({ 'one.test': [0] });
    const results = await w.engine({ recipientsPerSession: 10 }).verifyMany(addresses('one.test', 35));
    expect(tally(results)).toEqual({ 'deliverable/-': 35 });
    for (const session of w.mta.stats().sessions) {
      expect(session.commands.filter((c) => c.startsWith('RCPT')).length).toBeLessThanOrEqual(10);
    }
    expect(w.mta.stats().connections).toBeGreaterThanOrEqual(4);
  });

  it('retries in a new transaction when the server answers 452 4.5.3 too many recipients', async () => {
    const w = await world({ 'one.test': [0] }, { maxRecipientsPerTransaction: 4 });
    const results = await w.engine().verifyMany(addresses('one.test', 20));
    expect(tally(results)).toEqual({ 'deliverable/-': 20 });
    expect(w.mta.stats().rsets).toBeGreaterThan(0);
  });
});

describe('batch engine: politeness', () => {
  it('stays under the server error limit: at most 9 rejected RCPTs per session, then a new session', async () => {
    const w = await world({ 'one.test': [0] }, { hardErrorLimit: 20 });
    const emails = [...addresses('one.test', 40, 'nobody'), ...addresses('one.test', 10)];
    const results = await w.engine().verifyMany(emails);
    expect(tally(results)).toEqual({ 'undeliverable/smtp_rejected': 40, 'deliverable/-': 10 });
    const stats = w.mta.stats();
    expect(stats.maxErrorsPerSession).toBeLessThanOrEqual(9);
    expect(stats.errorLimitDisconnects).toBe(0);
    expect(stats.connections).toBeGreaterThanOrEqual(5);
  });

  it('never opens more sessions to one host than the per-host cap, nor in all than the global cap', async () => {
    const w = await world({ 'a.test': [0], 'b.test': [0], 'c.test': [1], 'd.test': [2] }, { latencyMs: 5 });
    const emails = ['a.test', 'b.test', 'c.test', 'd.test'].flatMap((d) => addresses(d, 80));
    const results = await w
      .engine({ perHostConcurrency: 2, concurrency: 4, itemsPerSession: 5 })
      .verifyMany(emails);
    expect(tally(results)).toEqual({ 'deliverable/-': 320 });
    const stats = w.mta.stats();
    expect(Math.max(...Object.values(stats.peakConcurrentByHost))).toBe(2);
    expect(stats.peakConcurrent).toBeLessThanOrEqual(4);
  });

  it('backs off a host that answers 421 and moves its addresses to the next MX', async () => {
    const w = await world(
      { 'two.test': [0, 1] },
      { banner: (host) => (host === HOSTS[0] ? '421 4.3.2 busy' : '220 ok') },
    );
    const results = await w.engine({ hostBackoffMs: 60_000 }).verifyMany(addresses('two.test', 20));
    expect(tally(results)).toEqual({ 'deliverable/-': 20 });
    const stats = w.mta.stats();
    // Backed off after its 421: asked once, not once per address.
    expect(stats.connectionsByHost[HOSTS[0]!]).toBe(1);
    expect(results[0]!.checks.smtp.host).toBe('mx1.test');
  });

  it('gives up on a host that keeps answering 421 after a bounded number of tries: unknown / smtp_unavailable', async () => {
    const w = await world({ 'busy.test': [0] }, { banner: () => '421 4.3.2 busy' });
    const results = await w.engine({ maxHostFailures: 3 }).verifyMany(addresses('busy.test', 10));
    expect(tally(results)).toEqual({ 'unknown/smtp_unavailable': 10 });
    expect(w.mta.stats().connectionsByHost[HOSTS[0]!]).toBe(3);
    expect(results[0]!.checks.smtp.message).toContain('421');
  });

  it('settles every address at a host that refuses the probe sender as smtp_blocked, in one session', async () => {
    const w = await world(
      { 'strict.test': [0] },
      { mail: () => '550 5.7.1 Sender address rejected: policy' },
    );
    const warnings: object[] = [];
    const results = await w
      .engine({}, { warn: (obj) => warnings.push(obj) })
      .verifyMany(addresses('strict.test', 30));
    expect(tally(results)).toEqual({ 'unknown/smtp_blocked': 30 });
    expect(results[0]!.checks.smtp).toMatchObject({ code: 550, enhanced_code: '5.7.1' });
    expect(w.mta.stats().connections).toBe(1);
    expect(warnings).toEqual([
      expect.objectContaining({ host: 'mx0.test', failure: 'blocked', addresses: 31 }),
    ]);
  });

  it('stops asking a host that refuses the prober at RCPT (blocklist): the rest settle as smtp_blocked', async () => {
    const spamhaus = '554 5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org';
    const w = await world({ 'rbl.test': [0] }, { rcpt: () => spamhaus });
    const results = await w.engine().verifyMany(addresses('rbl.test', 40));
    expect(tally(results)).toEqual({ 'unknown/smtp_blocked': 40 });
    expect(results[39]!.checks.smtp).toMatchObject({ code: 554, enhanced_code: '5.7.1' });
    const stats = w.mta.stats();
    expect(stats.connections).toBe(1);
    expect(stats.rcpts).toBeLessThanOrEqual(9);
  });

  it('holds the caps across concurrent calls on one engine', async () => {
    const w = await world({ 'a.test': [0], 'b.test': [0] }, { latencyMs: 5 });
    const engine = w.engine({ perHostConcurrency: 1, itemsPerSession: 5 });
    const [a, b] = await Promise.all([
      engine.verifyMany(addresses('a.test', 60)),
      engine.verifyMany(addresses('b.test', 60)),
    ]);
    expect(tally([...a, ...b])).toEqual({ 'deliverable/-': 120 });
    expect(w.mta.stats().peakConcurrentByHost[HOSTS[0]!]).toBe(1);
  });

  it('moves on when the first MX refuses the connection', async () => {
    const w = await world({ 'fallback.test': [-1, 2] });
    const results = await w.engine().verifyMany(addresses('fallback.test', 5));
    expect(tally(results)).toEqual({ 'deliverable/-': 5 });
    expect(results[0]!.checks.smtp.host).toBe('mx2.test');
  });

  it('tries the next address of an MX host whose first address refuses the connection', async () => {
    const w = await world({});
    w.dns.setDomain('multi-mx.test', { a: [DEAD_HOST, HOSTS[1]!] });
    w.dns.setDomain('multi.test', { mx: [{ exchange: 'multi-mx.test', priority: 10 }] });
    const results = await w.engine().verifyMany(addresses('multi.test', 5));
    expect(tally(results)).toEqual({ 'deliverable/-': 5 });
    expect(results[0]!.checks.smtp.host).toBe('multi-mx.test');
    expect(w.mta.stats().connectionsByHost[HOSTS[1]!]).toBe(1);
  });

  it('settles addresses at a silent host as unknown / smtp_timeout', async () => {
    const w = await world({ 'silent.test': [0] }, { banner: () => null });
    const results = await w
      .engine({ timeoutMs: 150, maxHostFailures: 2 })
      .verifyMany(addresses('silent.test', 3));
    expect(tally(results)).toEqual({ 'unknown/smtp_timeout': 3 });
  });
});

describe('batch engine: greylisting', () => {
  it('tries greylisted addresses again later while the rest proceeds, then settles them as greylisted', async () => {
    const seen = new Map<string, number>();
    const rcpt = (address: string): string => {
      const n = (seen.get(address) ?? 0) + 1;
      seen.set(address, n);
      if (address.startsWith('grey-once'))
        return n === 1 ? '450 4.7.1 Greylisted, try again later' : '250 2.1.5 OK';
      if (address.startsWith('grey-always')) return '450 4.7.1 Greylisted, try again later';
      return mailboxes(address);
    };
    const w = await world({ 'g.test': [0] }, { rcpt });
    const order: string[] = [];
    const emails = ['grey-once@g.test', 'grey-always@g.test', ...addresses('g.test', 5)];
    const results = await w
      .engine({ greylistRetries: 2, greylistDelayMs: 30 })
      .verifyMany(emails, { onResult: (i) => order.push(emails[i]!) });
    expect(results[0]).toMatchObject({ status: 'deliverable', reason: null });
    expect(results[1]).toMatchObject({ status: 'unknown', reason: 'greylisted' });
    expect(seen.get('grey-once@g.test')).toBe(2);
    // One try and two more.
    expect(seen.get('grey-always@g.test')).toBe(3);
    // The others did not wait for the greylisted ones.
    expect(order.slice(0, 5).sort()).toEqual(addresses('g.test', 5).sort());
  });
});

describe('batch engine: the list', () => {
  it('probes each distinct address once, copies the result to duplicates and keeps input order', async () => {
    const w = await world({ 'one.test': [0], 'two.test': [1] });
    const emails = [
      'user1@one.test',
      'nobody@two.test',
      'user1@ONE.test',
      'user2@two.test',
      'user1@one.test',
    ];
    const results = await w.engine().verifyMany(emails);
    expect(results.map((r) => r.email)).toEqual([
      'user1@one.test',
      'nobody@two.test',
      'user1@one.test',
      'user2@two.test',
      'user1@one.test',
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'deliverable',
      'undeliverable',
      'deliverable',
      'deliverable',
      'deliverable',
    ]);
    const rcpts = transactions(w.mta).flat();
    expect(rcpts.filter((l) => l === 'RCPT TO:<user1@one.test>')).toHaveLength(1);
  });

  it('gives malformed strings an undeliverable / invalid_email_format row without any network', async () => {
    const w = await world({ 'one.test': [0] });
    const emails = ['not an address', 'user1@one.test', '', 'a@b@c', 'evil@one.test\r\nRSET'];
    const reported: number[] = [];
    const results = await w.engine().verifyMany(emails, { onResult: (i) => reported.push(i) });
    expect(results.map((r) => r.reason)).toEqual([
      'invalid_email_format',
      null,
      'invalid_email_format',
      'invalid_email_format',
      'invalid_email_format',
    ]);
    expect(results[0]).toMatchObject({ status: 'undeliverable', score: 0, email: 'not an address' });
    expect(reported.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(
      w.mta
        .stats()
        .sessions.flatMap((s) => s.commands)
        .some((c) => c.includes('evil')),
    ).toBe(false);
  });

  it('settles DNS verdicts without SMTP: unknown domain, null MX', async () => {
    const w = await world({ 'one.test': [0] });
    w.dns.setNullMx('nullmx.test');
    const results = await w.engine().verifyMany(['a@nowhere.test', 'b@nullmx.test']);
    expect(results.map((r) => `${r.status}/${r.reason}`)).toEqual([
      'undeliverable/domain_not_found',
      'undeliverable/null_mx',
    ]);
    expect(w.mta.stats().connections).toBe(0);
  });

  it('tests catch-all once per domain and caches the answer across calls', async () => {
    const rcpt = (address: string): string =>
      address.endsWith('@catchall.test') ? '250 2.1.5 OK' : mailboxes(address);
    const w = await world({ 'catchall.test': [0], 'normal.test': [1] }, { rcpt });
    const engine = w.engine();
    const first = await engine.verifyMany([
      ...addresses('catchall.test', 30),
      ...addresses('normal.test', 30),
    ]);
    expect(tally(first)).toEqual({ 'risky/catch_all': 30, 'deliverable/-': 30 });
    const probes = (): string[] =>
      transactions(w.mta)
        .flat()
        .filter((l) => !/<(user|nobody)/.test(l));
    expect(probes().filter((l) => l.endsWith('@catchall.test>'))).toHaveLength(1);
    expect(probes().filter((l) => l.endsWith('@normal.test>'))).toHaveLength(1);
    const again = await engine.verifyMany(addresses('catchall.test', 3, 'user-again'));
    expect(tally(again)).toEqual({ 'risky/catch_all': 3 });
    expect(probes().filter((l) => l.endsWith('@catchall.test>'))).toHaveLength(1);
  });

  it('gives each address the same result as the single verifier (shape, verdict, checks)', async () => {
    const rcpt = (address: string): string => {
      if (address.startsWith('full')) return '452 4.2.2 Mailbox full';
      if (address.startsWith('blocked')) return '554 5.7.1 Client host blocked using zen.spamhaus.org';
      if (address.endsWith('@catchall.test')) return '250 2.1.5 OK';
      return mailboxes(address);
    };
    const w = await world({ 'one.test': [0], 'catchall.test': [1] }, { rcpt });
    const emails = [
      'user1@one.test',
      'nobody@one.test',
      'full@one.test',
      'blocked@one.test',
      'info@catchall.test',
      'x@nowhere.test',
      'bad address',
    ];
    const batch = await w.engine().verifyMany(emails);
    const config = loadConfig(
      { dnsServer: w.dns.address, smtpPort: String(w.mta.port), allowInternalTargets: 'true' },
      {},
    );
    const verifier = createVerifier(config.engine);
    cleanups.push(() => verifier.close());
    for (let i = 0; i < emails.length; i++) {
      const single = await verifier.verify(emails[i]!, { timeoutMs: 2000 });
      expect(comparable(batch[i]!), emails[i]).toEqual(comparable(single));
    }
    expect(batch.map((r) => r.reason)).toEqual([
      null,
      'smtp_rejected',
      'mailbox_full',
      'smtp_blocked',
      'catch_all',
      'domain_not_found',
      'invalid_email_format',
    ]);
  });
});

/** A batch engine whose domain `kit.test` has one MX: a kit host with `script`. */
async function kitWorld(script: MtaScript, overrides: Partial<BatchEngineOptions> = {}) {
  const kit = await startSmtpServers({ mx: script });
  const dns = await startDnsServer();
  cleanups.push(
    () => kit.close(),
    () => dns.close(),
  );
  dns.setDomain('mx.kit.test', { a: [kit.hosts.mx!.ip] });
  dns.setDomain('kit.test', { mx: [{ exchange: 'mx.kit.test', priority: 10 }] });
  const config = loadConfig(
    { dnsServer: dns.address, smtpPort: String(kit.port), allowInternalTargets: 'true' },
    {},
  );
  const engine = createBatchEngine(
    {
      ...config.engine,
      concurrency: 5,
      perHostConcurrency: 2,
      greylistRetries: 0,
      greylistDelayMs: 10,
      timeoutMs: 3000,
      ...overrides,
    },
    {},
  );
  cleanups.push(() => engine.close());
  return { host: kit.hosts.mx!, engine };
}

describe('batch engine: against smtp-server (the engine test kit)', () => {
  it('upgrades with STARTTLS when offered and reuses the TLS session for every recipient', async () => {
    const { host, engine } = await kitWorld({
      kind: 'mta',
      tls: 'offer',
      mailboxes: ['alice', 'bob', 'carol'],
      rcpt: { full: REPLIES.mailboxFull },
    });
    const results = await engine.verifyMany([
      'alice@kit.test',
      'bob@kit.test',
      'nobody@kit.test',
      'full@kit.test',
      'carol@kit.test',
    ]);
    expect(results.map((r) => r.reason)).toEqual([null, null, 'smtp_rejected', 'mailbox_full', null]);
    expect(results.every((r) => r.checks.smtp.tls)).toBe(true);
    expect(host.connections).toBe(1);
    expect(host.tlsSessions).toBe(1);
    expect(host.commands.filter((c) => c.startsWith('MAIL FROM'))).toHaveLength(1);
  });
});

describe('batch engine: SMTPUTF8 (RFC 6531)', () => {
  const nonAscii = /\P{ASCII}/u;

  it('writes no RCPT for a non-ASCII local part where SMTPUTF8 is not offered; the ASCII ones of the session are probed', async () => {
    const { host, engine } = await kitWorld({
      kind: 'mta',
      mailboxes: ['alice', 'bob', 'jörg', 'müller'],
      smtpUtf8: false,
    });
    const results = await engine.verifyMany([
      'alice@kit.test',
      'jörg@kit.test',
      'nobody@kit.test',
      'bob@kit.test',
      'müller@kit.test',
    ]);
    expect(results.map((r) => `${r.status}/${r.reason ?? '-'}`)).toEqual([
      'deliverable/-',
      'unknown/smtp_unicode_unsupported',
      'undeliverable/smtp_rejected',
      'deliverable/-',
      'unknown/smtp_unicode_unsupported',
    ]);
    expect(results[1]!.checks.smtp).toMatchObject({ passed: null, host: 'mx.kit.test', code: null });
    expect(host.connections).toBe(1);
    const rcpts = host.commands.filter((c) => c.startsWith('RCPT TO'));
    expect(rcpts.filter((c) => nonAscii.test(c))).toEqual([]);
    // The three ASCII recipients and the domain's catch-all probe.
    expect(rcpts).toHaveLength(4);
    expect(host.commands.filter((c) => c.startsWith('MAIL FROM'))).toHaveLength(1);
  });

  it('opens no transaction in a session that has only non-ASCII recipients to write', async () => {
    const { host, engine } = await kitWorld(
      { kind: 'mta', mailboxes: ['jörg'], smtpUtf8: false },
      { mode: 'per-address' },
    );
    const [result] = await engine.verifyMany(['jörg@kit.test']);
    expect(result!.reason).toBe('smtp_unicode_unsupported');
    // Two sessions: the catch-all probe's transaction, and one that greeted and QUIT. The call
    // resolves when the recipient settles; the catch-all session may still be on the wire.
    await vi.waitFor(() => expect(host.commands.filter((c) => c === 'QUIT')).toHaveLength(2), WAIT_FOR);
    expect(host.connections).toBe(2);
    expect(host.commands.filter((c) => c.startsWith('MAIL FROM'))).toHaveLength(1);
    expect(host.commands.filter((c) => nonAscii.test(c))).toEqual([]);
  });
});

describe('batch engine: per-address baseline', () => {
  it('opens one connection per address, without pipelining, and reaches the same verdicts', async () => {
    const w = await world({ 'one.test': [0] });
    const emails = [...addresses('one.test', 12), ...addresses('one.test', 3, 'nobody')];
    const pooled = await w.engine().verifyMany(emails);
    const pooledConnections = w.mta.stats().connections;
    w.mta.resetStats();
    const baseline = await w.engine({ mode: 'per-address' }).verifyMany(emails);
    expect(baseline.map((r) => `${r.status}/${r.reason}`)).toEqual(
      pooled.map((r) => `${r.status}/${r.reason}`),
    );
    const stats = w.mta.stats();
    // One per address, plus one for the domain's catch-all probe.
    expect(stats.connections).toBe(emails.length + 1);
    expect(stats.maxRcptsPerRead).toBe(1);
    expect(pooledConnections).toBeLessThan(stats.connections);
  });
});

describe('batch engine: abort', () => {
  it('stops on abort: the call rejects, settled results were delivered, sessions close', async () => {
    const w = await world({ 'slow.test': [0] }, { latencyMs: 40 });
    const engine = w.engine({ perHostConcurrency: 1 });
    const controller = new AbortController();
    const settled: number[] = [];
    const emails = addresses('slow.test', 200);
    const run = engine.verifyMany(emails, {
      signal: controller.signal,
      onResult: (i) => {
        settled.push(i);
        if (settled.length === 10) controller.abort(new Error('stop'));
      },
    });
    await expect(run).rejects.toThrow('stop');
    expect(settled.length).toBeGreaterThanOrEqual(10);
    expect(settled.length).toBeLessThan(emails.length);
    await engine.close();
    const before = w.mta.stats().rcpts;
    expect(before).toBeLessThan(emails.length);
  });
});

describe('batch engine: a failing onResult', () => {
  it('rejects the call with the callback error instead of hanging', async () => {
    const w = await world({ 'one.test': [0] });
    const run = w.engine().verifyMany(addresses('one.test', 5), {
      onResult: () => {
        throw new Error('callback broke');
      },
    });
    await expect(run).rejects.toThrow('callback broke');
  });
});

/** A result without what differs between two runs by nature: elapsed times. */
function comparable(result: VerificationResult): unknown {
  return {
    ...result,
    latency_ms: 0,
    checks: { ...result.checks, smtp: { ...result.checks.smtp, duration_ms: 0 } },
  };
}

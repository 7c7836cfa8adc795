/**
 * Warm sessions of single verifications (src/engine/sessions/warm-pool.ts), through real sockets to
 * the kit's latency MTA: reuse, a session the server let go replaced, the per-host cap, the
 * request's budget bounding the wait for a session, the STARTTLS modes, and no CR/LF on the wire.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EngineOptions, Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import { SmtpCommandError } from '../../src/engine/smtp/connection.js';
import { SmtpProber } from '../../src/engine/probe.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import type { LatencyMta } from '../kit/latency-mta.js';
import { startLatencyMta } from '../kit/latency-mta.js';
import { waitFor } from '../kit/wait-for.js';

const PLAIN = '127.0.8.1';
const TLS = '127.0.8.2';
const SHUTS_DOWN = '127.0.8.3';
const IDLE_CLOSE = '127.0.8.4';
const CAPPED = '127.0.8.5';
const SLOW = '127.0.9.1';

let dns: FakeDnsServer;
let mta: LatencyMta;
let slow: LatencyMta;
const verifiers: Verifier[] = [];
/** The `user…` mailboxes exist; any other (the catch-all probe's) does not. */
const mailboxes = (address: string): string =>
  address.startsWith('user') ? '250 2.1.5 OK' : '550 5.1.1 User unknown';

beforeAll(async () => {
  dns = await startDnsServer();
  mta = await startLatencyMta({
    hosts: [PLAIN, TLS, SHUTS_DOWN, IDLE_CLOSE, CAPPED],
    oneWayMs: 2,
    starttls: (host) => host === TLS,
    idleTimeoutMs: (host) => (host === IDLE_CLOSE ? 100 : Infinity),
    closeAtRset: (host) => host === SHUTS_DOWN,
    rcpt: mailboxes,
  });
  // Banner 1.2 s away: a session to it is busy for seconds.
  slow = await startLatencyMta({ hosts: [SLOW], oneWayMs: 300, rcpt: mailboxes });
});

afterEach(async () => {
  await Promise.all(verifiers.splice(0).map((v) => v.close()));
});

afterAll(async () => {
  await mta.close();
  await slow.close();
  await dns.close();
});

/** `domain` with one MX at `ip`. */
function route(domain: string, ip: string): void {
  dns.setDomain(domain, { mx: [{ exchange: `mx.${domain}`, priority: 10 }] });
  dns.setDomain(`mx.${domain}`, { a: [ip] });
}

function verifier(smtp: Partial<EngineOptions['smtp']> = {}, port = mta.port): Verifier {
  const options = kitEngineOptions(dns.address, port);
  const v = createVerifier({ ...options, smtp: { ...options.smtp, sessions: { idleMs: 5_000 }, ...smtp } });
  verifiers.push(v);
  return v;
}

const commandsTo = (host: string): string[][] =>
  mta.sessions.filter((s) => s.host === host).map((s) => s.commands);

describe('warm sessions of single verifications', () => {
  it('carries the next verification to the same host on the open session: RSET, MAIL, RCPT', async () => {
    route('reuse.test', PLAIN);
    const v = verifier();
    const first = await v.verify('user1@reuse.test');
    const second = await v.verify('user2@reuse.test');
    expect([first.status, second.status]).toEqual(['deliverable', 'deliverable']);
    expect(mta.connectionsTo(PLAIN)).toBe(1);
    const [commands] = commandsTo(PLAIN);
    expect(commands!.slice(-3)).toEqual([
      'RSET',
      'MAIL FROM:<verify@probe.mailverdict.test>',
      'RCPT TO:<user2@reuse.test>',
    ]);
    expect(commands).not.toContain('QUIT');
    expect(v.sessionStats!()).toMatchObject({ opened: 1, reused: 1, closedByServer: 0 });
    expect(v.sessionStats!().openByHost.get(PLAIN)).toBe(1);
  });

  it('QUITs after each verification with --smtp-session-idle off', async () => {
    route('off.test', CAPPED);
    const before = mta.connectionsTo(CAPPED);
    const v = verifier({ sessions: { idleMs: 0 } });
    await v.verify('user1@off.test');
    await v.verify('user2@off.test');
    expect(mta.connectionsTo(CAPPED) - before).toBe(2);
    expect(v.sessionStats!().reused).toBe(0);
  });

  it('replaces a warm session that the server answers 421 on, without failing the verification', async () => {
    route('shutdown.test', SHUTS_DOWN);
    const v = verifier();
    expect((await v.verify('user1@shutdown.test')).status).toBe('deliverable');
    const second = await v.verify('user2@shutdown.test');
    expect(second.status).toBe('deliverable');
    expect(second.checks.smtp.code).toBe(250);
    const sessions = commandsTo(SHUTS_DOWN);
    expect(sessions).toHaveLength(2);
    expect(sessions[0]!.at(-1)).toBe('RSET');
    expect(sessions[1]).toContain('RCPT TO:<user2@shutdown.test>');
    expect(v.sessionStats!().closedByServer).toBe(1);
  });

  it('opens a new session when the server closed the idle one (its smtpd_timeout)', async () => {
    route('idle.test', IDLE_CLOSE);
    const v = verifier();
    await v.verify('user1@idle.test');
    await waitFor(
      'the server closes the idle session',
      async () => (v.sessionStats!().closedByServer === 1 ? true : undefined),
      3_000,
      20,
    );
    expect((await v.verify('user2@idle.test')).status).toBe('deliverable');
    expect(mta.connectionsTo(IDLE_CLOSE)).toBe(2);
  });

  it('keeps concurrent verifications to one host within the per-host cap', async () => {
    route('capped.test', CAPPED);
    mta.core.resetTally();
    const v = verifier({ perHostConcurrency: 2 });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => v.verify(`user${i}@capped.test`, { timeoutMs: 5_000 })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill('deliverable'));
    expect(mta.core.peakConnected(CAPPED)).toBeLessThanOrEqual(2);
    expect(v.sessionStats!().reused).toBeGreaterThan(0);
  });

  it('bounds the wait for a session by the request timeout_ms', async () => {
    route('slow.test', SLOW);
    const v = verifier({ perHostConcurrency: 1 }, slow.port);
    const holding = v.verify('user1@slow.test', { timeoutMs: 5_000 });
    // Let the first verification take the only slot.
    await waitFor(
      'the first session connects',
      async () => (slow.sessions.length > 0 ? true : undefined),
      2_000,
      10,
    );
    const waiting = await v.verify('user2@slow.test', { timeoutMs: 300 });
    expect(waiting.status).toBe('unknown');
    expect(waiting.reason).toBe('smtp_timeout');
    expect(waiting.checks.smtp.message).toContain('per-host session cap');
    expect((await holding).status).toBe('deliverable');
    expect(slow.sessions).toHaveLength(1);
  });
});

describe('--starttls', () => {
  it('opportunistic: TLS where the server offers it', async () => {
    route('tls-opp.test', TLS);
    const result = await verifier().verify('user1@tls-opp.test');
    expect(result.status).toBe('deliverable');
    expect(result.checks.smtp.tls).toBe(true);
  });

  it('never: clear text even where the server offers STARTTLS', async () => {
    route('tls-never.test', TLS);
    const before = commandsTo(TLS).length;
    const result = await verifier({ starttls: 'never' }).verify('user1@tls-never.test');
    expect(result.status).toBe('deliverable');
    expect(result.checks.smtp.tls).toBe(false);
    expect(commandsTo(TLS).slice(before).flat()).not.toContain('STARTTLS');
  });

  it('required: a host without STARTTLS is not asked about the recipient, an honest unknown', async () => {
    route('tls-req-plain.test', PLAIN);
    const v = verifier({ starttls: 'required' });
    const before = commandsTo(PLAIN).length;
    const result = await v.verify('user1@tls-req-plain.test');
    expect(result.status).toBe('unknown');
    expect(result.reason).toBe('smtp_unavailable');
    expect(result.checks.smtp.message).toContain('--starttls required');
    expect(
      commandsTo(PLAIN)
        .slice(before)
        .flat()
        .filter((c) => c.startsWith('RCPT')),
    ).toEqual([]);

    route('tls-req.test', TLS);
    const secure = await v.verify('user1@tls-req.test');
    expect(secure.status).toBe('deliverable');
    expect(secure.checks.smtp.tls).toBe(true);
  });
});

describe('CR/LF on a warm session', () => {
  it('refuses a line with CR/LF before writing anything, and the host is asked correctly after', async () => {
    route('crlf.test', PLAIN);
    const prober = new SmtpProber({
      ...kitEngineOptions(dns.address, mta.port).smtp,
      sessions: { idleMs: 5_000 },
      catchAllTtlMs: 60_000,
    });
    try {
      const hosts = [{ exchange: 'mx.crlf.test', priority: 10, addresses: [PLAIN] }];
      const ask = (address: string) =>
        prober.probe({ address, domain: 'crlf.test', hosts, timeoutMs: 2_000 });
      expect((await ask('user1@crlf.test')).kind).toBe('accepted');
      await expect(ask('user2@crlf.test>\r\nRCPT TO:<injected@crlf.test')).rejects.toBeInstanceOf(
        SmtpCommandError,
      );
      expect((await ask('user3@crlf.test')).kind).toBe('accepted');
      const wire = commandsTo(PLAIN).flat();
      expect(wire.some((line) => line.includes('injected'))).toBe(false);
      expect(wire).toContain('RCPT TO:<user3@crlf.test>');
    } finally {
      await prober.close();
    }
  });
});

/**
 * The verdict table of issue 2, row by row, through real sockets: the engine asks the fake DNS
 * server, then probes the scripted loopback MTAs. See docs/verdicts.md.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EngineOptions, VerificationResult, Verifier } from '../../src/engine/index.js';
import { REASONS, createVerifier } from '../../src/engine/index.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { KitHost, SmtpKit } from '../kit/smtp-servers.js';
import { REPLIES, startSmtpServers } from '../kit/smtp-servers.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import { WAIT_FOR } from '../kit/wait-for.js';

let kit: SmtpKit;
let dns: FakeDnsServer;
let verifier: Verifier;

function engineOptions(): EngineOptions {
  return kitEngineOptions(dns.address, kit.port);
}

/** Points `domain` at kit hosts: one MX per host, preference 10, 20... */
function route(domain: string, ...hosts: string[]): void {
  dns.setDomain(domain, {
    mx: hosts.map((host, i) => ({ exchange: `mx${i + 1}.${domain}`, priority: 10 * (i + 1) })),
  });
  hosts.forEach((host, i) => dns.setDomain(`mx${i + 1}.${domain}`, { a: [kit.hosts[host]!.ip] }));
}

async function dialogueOf(host: KitHost): Promise<string[]> {
  await vi.waitFor(() => expect(host.commands).toContain('QUIT'), WAIT_FOR);
  return host.commands;
}

function totalConnections(): number {
  return Object.values(kit.hosts).reduce((sum, host) => sum + host.connections, 0);
}

beforeAll(async () => {
  kit = await startSmtpServers({
    good: { kind: 'mta', mailboxes: ['alice', 'postmaster', 'john'] },
    catchall: { kind: 'mta', catchAll: true },
    quirks: {
      kind: 'mta',
      mailboxes: ['alice'],
      rcpt: {
        full: REPLIES.mailboxFull,
        quota: REPLIES.mailboxFullPermanent,
        gone: REPLIES.disabled,
        greylisted: REPLIES.greylisted,
        spam: REPLIES.spamhaus,
      },
    },
    mailBlock: { kind: 'mta', mailReply: REPLIES.spamhaus },
    bannerBlock: { kind: 'mta', bannerReply: REPLIES.bannerRefused },
    busy: { kind: 'mta', bannerReply: REPLIES.bannerBusy },
    refuse: { kind: 'refuse' },
    silent: { kind: 'silent' },
    tls: { kind: 'mta', mailboxes: ['alice'], tls: 'require' },
    drop: { kind: 'raw', dropAt: 'RCPT' },
  });
  dns = await startDnsServer();
  route('good.test', 'good');
  route('catchall.test', 'catchall');
  route('quirks.test', 'quirks');
  route('mail-blocked.test', 'mailBlock');
  route('banner-blocked.test', 'bannerBlock');
  route('down.test', 'refuse', 'busy');
  route('silent.test', 'silent');
  route('tls.test', 'tls');
  route('failover.test', 'refuse', 'good');
  route('drop.test', 'drop');
  route('mailinator.com', 'good');
  route('gmail.com', 'good');
  dns.setDomain('implicit.test', { a: [kit.hosts.good!.ip] });
  // A Microsoft 365 tenant as its MX names it, the host being a kit MTA.
  dns.setDomain('tenant.test', {
    mx: [{ exchange: 'tenant-test.mail.protection.outlook.com', priority: 0 }],
  });
  dns.setDomain('tenant-test.mail.protection.outlook.com', { a: [kit.hosts.good!.ip] });
  dns.setDomain('nomx.test', {});
  dns.setDomain('dangling.test', { mx: [{ exchange: 'mx.nowhere.test', priority: 10 }] });
  dns.setNullMx('nullmx.test');
  dns.setServfail('servfail.test');
  dns.setSilent('dns-silent.test');
  verifier = createVerifier(engineOptions());
});

afterAll(async () => {
  await verifier?.close();
  await kit?.close();
  await dns?.close();
});

beforeEach(() => {
  kit.resetRecords();
});

function expectReason(result: VerificationResult, status: string, reason: string | null): void {
  expect({ status: result.status, reason: result.reason }).toEqual({ status, reason });
  expect(REASONS as readonly (string | null)[]).toContain(reason ?? 'invalid_email_format');
}

describe('checks.mx.provider', () => {
  it('names the provider whose MX host names the domain uses', async () => {
    const result = await verifier.verify('alice@tenant.test');
    expect(result.status).toBe('deliverable');
    expect(result.checks.mx).toMatchObject({ passed: true, provider: 'microsoft' });
  });

  it('is null for other mail hosts, for a domain without mail hosts, and for a malformed address', async () => {
    expect((await verifier.verify('alice@good.test')).checks.mx.provider).toBeNull();
    expect((await verifier.verify('alice@nullmx.test')).checks.mx.provider).toBeNull();
    expect((await verifier.verify('not an address')).checks.mx.provider).toBeNull();
    expect(verifier.verifyOffline('alice@tenant.test').checks.mx.provider).toBeNull();
  });
});

describe('verdict table, through real sockets', () => {
  it('invalid format: undeliverable invalid_email_format, without any network traffic', async () => {
    const result = await verifier.verify('not an address');
    expectReason(result, 'undeliverable', 'invalid_email_format');
    expect(result).toMatchObject({ valid: false, score: 0, mx: false, email: 'not an address' });
    expect(result.checks.syntax).toMatchObject({ passed: false, local: null, domain: null });
    expect(result.checks.syntax.error).toEqual(expect.any(String));
    expect(result.checks.mx.passed).toBeNull();
    expect(result.checks.smtp.passed).toBeNull();
    expect(result.checks.disposable.passed).toBeNull();
    expect(totalConnections()).toBe(0);
  });

  it('RCPT 250 at a domain that is not catch-all: deliverable, with the full breakdown', async () => {
    const result = await verifier.verify('alice@good.test');
    expectReason(result, 'deliverable', null);
    expect(result).toMatchObject({
      email: 'alice@good.test',
      valid: true,
      disposable: false,
      catchAll: false,
      mx: true,
      did_you_mean: null,
    });
    expect(result.score).toBeGreaterThanOrEqual(60);
    expect(Number.isInteger(result.latency_ms)).toBe(true);
    expect(result.checks).toEqual({
      syntax: { passed: true, local: 'alice', domain: 'good.test', error: null },
      mx: {
        passed: true,
        records: [{ exchange: 'mx1.good.test', priority: 10 }],
        implicit: false,
        error: null,
        provider: null,
      },
      smtp: {
        passed: true,
        host: 'mx1.good.test',
        code: 250,
        enhanced_code: null,
        message: expect.any(String),
        tls: false,
        duration_ms: expect.any(Number),
      },
      disposable: { passed: true, value: false, signal: null, mx_host: null },
      roleAddress: { passed: true, value: false },
      freeProvider: { passed: true, value: false },
      catchAll: { passed: true, value: false },
    });
  });

  it('RCPT 550 5.1.1 user unknown: undeliverable smtp_rejected, with the reply as evidence', async () => {
    const result = await verifier.verify('nobody@good.test');
    expectReason(result, 'undeliverable', 'smtp_rejected');
    expect(result.score).toBeLessThan(10);
    expect(result.checks.smtp).toMatchObject({ passed: false, code: 550, enhanced_code: '5.1.1' });
  });

  it('RCPT 550 5.2.1 mailbox disabled: undeliverable smtp_rejected', async () => {
    const result = await verifier.verify('gone@quirks.test');
    expectReason(result, 'undeliverable', 'smtp_rejected');
    expect(result.checks.smtp).toMatchObject({ code: 550, enhanced_code: '5.2.1' });
  });

  it('RCPT 452 4.2.2 mailbox full: risky mailbox_full', async () => {
    const result = await verifier.verify('full@quirks.test');
    expectReason(result, 'risky', 'mailbox_full');
    expect(result.checks.smtp).toMatchObject({ passed: false, code: 452, enhanced_code: '4.2.2' });
  });

  it('RCPT 552 5.2.2 mailbox full: risky mailbox_full', async () => {
    const result = await verifier.verify('quota@quirks.test');
    expectReason(result, 'risky', 'mailbox_full');
    expect(result.checks.smtp).toMatchObject({ code: 552, enhanced_code: '5.2.2' });
  });

  it('catch-all domain: risky catch_all, not valid', async () => {
    const result = await verifier.verify('anyone@catchall.test');
    expectReason(result, 'risky', 'catch_all');
    expect(result).toMatchObject({ valid: false, catchAll: true });
    expect(result.checks.catchAll).toEqual({ passed: false, value: true });
    expect(result.score).toBeLessThan(60);
  });

  it('catch-all answer is cached per domain: the next probe sends a single RCPT', async () => {
    await verifier.verify('first@catchall.test');
    await dialogueOf(kit.hosts.catchall!);
    kit.resetRecords();
    const result = await verifier.verify('second@catchall.test');
    expectReason(result, 'risky', 'catch_all');
    const rcpts = (await dialogueOf(kit.hosts.catchall!)).filter((line) => line.startsWith('RCPT'));
    expect(rcpts).toEqual(['RCPT TO:<second@catchall.test>']);
  });

  it('disposable domain: risky disposable_domain; DNS is asked, the MX never contacted', async () => {
    const result = await verifier.verify('someone@mailinator.com');
    expectReason(result, 'risky', 'disposable_domain');
    expect(result).toMatchObject({ disposable: true, mx: true });
    expect(result.checks.disposable).toEqual({
      passed: false,
      value: true,
      signal: 'domain_list',
      mx_host: null,
    });
    expect(result.checks.smtp.passed).toBeNull();
    expect(kit.hosts.good!.connections).toBe(0);
  });

  it('450 4.7.1 greylisting: unknown greylisted', async () => {
    const result = await verifier.verify('greylisted@quirks.test');
    expectReason(result, 'unknown', 'greylisted');
    expect(result.checks.smtp).toMatchObject({ passed: null, code: 450, enhanced_code: '4.7.1' });
  });

  it('554 5.7.1 blocklist at RCPT: unknown smtp_blocked, never undeliverable', async () => {
    const result = await verifier.verify('spam@quirks.test');
    expectReason(result, 'unknown', 'smtp_blocked');
    expect(result.checks.smtp).toMatchObject({ passed: null, code: 554, enhanced_code: '5.7.1' });
    expect(result.checks.smtp.message).toContain('spamhaus');
  });

  it('rejection at MAIL FROM: unknown smtp_blocked', async () => {
    const result = await verifier.verify('alice@mail-blocked.test');
    expectReason(result, 'unknown', 'smtp_blocked');
    expect(result.checks.smtp).toMatchObject({ code: 554, host: 'mx1.mail-blocked.test' });
  });

  it('554 at the banner: unknown smtp_blocked', async () => {
    const result = await verifier.verify('alice@banner-blocked.test');
    expectReason(result, 'unknown', 'smtp_blocked');
    expect(result.checks.smtp.code).toBe(554);
  });

  it('every MX refuses or answers 421: unknown smtp_unavailable', async () => {
    const result = await verifier.verify('alice@down.test');
    expectReason(result, 'unknown', 'smtp_unavailable');
    expect(result.mx).toBe(true);
    expect(kit.hosts.busy!.connections).toBe(1);
  });

  it('a silent MX with timeout_ms 300: unknown smtp_timeout', async () => {
    const result = await verifier.verify('alice@silent.test', { timeoutMs: 300 });
    expectReason(result, 'unknown', 'smtp_timeout');
    expect(result.checks.smtp).toMatchObject({ passed: null, host: 'mx1.silent.test', code: null });
  });

  it('SERVFAIL: unknown dns_error, never undeliverable', async () => {
    const result = await verifier.verify('alice@servfail.test');
    expectReason(result, 'unknown', 'dns_error');
    expect(result.mx).toBe(false);
    expect(result.checks.mx).toMatchObject({ passed: null, error: 'SERVFAIL' });
    expect(totalConnections()).toBe(0);
  });

  it('a DNS server that never answers: unknown dns_error', async () => {
    const result = await verifier.verify('alice@dns-silent.test');
    expectReason(result, 'unknown', 'dns_error');
  });

  it('NXDOMAIN: undeliverable domain_not_found', async () => {
    const result = await verifier.verify('alice@no-such-domain.test');
    expectReason(result, 'undeliverable', 'domain_not_found');
    expect(result.checks.mx).toMatchObject({ passed: false, error: 'NXDOMAIN' });
  });

  it('no MX and no A/AAAA: undeliverable no_mx_records', async () => {
    const result = await verifier.verify('alice@nomx.test');
    expectReason(result, 'undeliverable', 'no_mx_records');
    expect(result.mx).toBe(false);
  });

  it('MX records whose hosts do not exist: undeliverable no_mx_records', async () => {
    const result = await verifier.verify('alice@dangling.test');
    expectReason(result, 'undeliverable', 'no_mx_records');
  });

  it('null MX (RFC 7505): undeliverable null_mx', async () => {
    const result = await verifier.verify('alice@nullmx.test');
    expectReason(result, 'undeliverable', 'null_mx');
    expect(result.checks.mx).toMatchObject({ passed: false, error: 'NULL_MX' });
  });

  it('no MX but an A record: the domain is its own mail host (implicit MX)', async () => {
    const result = await verifier.verify('alice@implicit.test');
    expectReason(result, 'deliverable', null);
    expect(result.checks.mx).toMatchObject({ passed: true, implicit: true });
  });

  it('STARTTLS offered: the probe runs over TLS and says so', async () => {
    const result = await verifier.verify('alice@tls.test');
    expectReason(result, 'deliverable', null);
    expect(result.checks.smtp.tls).toBe(true);
  });

  it('first MX refuses, the second answers: its answer decides', async () => {
    const result = await verifier.verify('alice@failover.test');
    expectReason(result, 'deliverable', null);
    expect(result.checks.smtp.host).toBe('mx2.failover.test');
    expect(result.checks.mx.records).toEqual([
      { exchange: 'mx1.failover.test', priority: 10 },
      { exchange: 'mx2.failover.test', priority: 20 },
    ]);
  });

  it('the only MX drops the connection mid-dialogue: unknown smtp_unavailable', async () => {
    const result = await verifier.verify('alice@drop.test');
    expectReason(result, 'unknown', 'smtp_unavailable');
    expect(kit.hosts.drop!.commands).toContain('RCPT TO:<alice@drop.test>');
  });

  it('an address literal is probed at that address without DNS', async () => {
    const queriesBefore = dns.queries.length;
    const result = await verifier.verify(`alice@[${kit.hosts.good!.ip}]`);
    expectReason(result, 'deliverable', null);
    expect(dns.queries.length).toBe(queriesBefore);
  });
});

describe('flags, suggestions and the offline check', () => {
  it('a role address at a free provider keeps its status and loses a little score', async () => {
    const plain = await verifier.verify('john@good.test');
    const flagged = await verifier.verify('postmaster@gmail.com');
    expectReason(flagged, 'deliverable', null);
    expect(flagged.checks.roleAddress).toEqual({ passed: false, value: true });
    expect(flagged.checks.freeProvider).toEqual({ passed: false, value: true });
    expect(flagged.score).toBeLessThan(plain.score);
    expect(flagged.score).toBeGreaterThanOrEqual(60);
  });

  it('suggests a correction for a mistyped popular domain', async () => {
    const result = await verifier.verify('john@gmial.com');
    expect(result.did_you_mean).toBe('john@gmail.com');
  });

  it('verifyOffline runs syntax and lists only: unknown test_mode, no DNS, no SMTP', () => {
    const queriesBefore = dns.queries.length;
    const result = verifier.verifyOffline('alice@good.test');
    expectReason(result, 'unknown', 'test_mode');
    expect(result.checks.mx.passed).toBeNull();
    expect(result.checks.smtp.passed).toBeNull();
    expect(result.mx).toBe(false);
    expect(dns.queries.length).toBe(queriesBefore);
    expect(totalConnections()).toBe(0);
  });

  it('verifyOffline still flags a disposable domain and an invalid address', () => {
    expectReason(verifier.verifyOffline('x@mailinator.com'), 'risky', 'disposable_domain');
    expectReason(verifier.verifyOffline('x@@good.test'), 'undeliverable', 'invalid_email_format');
  });
});

describe('an address with CR/LF never puts an extra command on the wire', () => {
  const smuggled = [
    '"a\r\nRSET"@good.test',
    'a@good.test\r\nDATA',
    'a@good.test\nRSET',
    'alice@good.test>\r\nRCPT TO:<bob@good.test',
    'a\r\n@good.test',
    '"a\rb"@good.test',
    'a\u0000@good.test',
  ];

  for (const address of smuggled) {
    it(`${JSON.stringify(address)} is invalid and opens no connection`, async () => {
      const queriesBefore = dns.queries.length;
      const result = await verifier.verify(address);
      expectReason(result, 'undeliverable', 'invalid_email_format');
      expect(totalConnections()).toBe(0);
      expect(kit.allCommands()).toEqual([]);
      expect(dns.queries.length).toBe(queriesBefore);
    });
  }

  it('a quoted local part with a space goes out as one RCPT line', async () => {
    await verifier.verify('"john smith"@good.test');
    const rcpts = (await dialogueOf(kit.hosts.good!)).filter((line) => line.startsWith('RCPT'));
    expect(rcpts[0]).toBe('RCPT TO:<"john smith"@good.test>');
    expect(kit.hosts.good!.commands.filter((line) => /^(RSET|DATA)/i.test(line))).toEqual([]);
  });
});

describe('lifecycle', () => {
  it('close() ends a probe in flight instead of waiting out its budget', async () => {
    const own = createVerifier(engineOptions());
    const pending = own.verify('alice@silent.test', { timeoutMs: 5000 });
    await vi.waitFor(() => expect(kit.hosts.silent!.connections).toBe(1), WAIT_FOR);
    await own.close();
    expectReason(await pending, 'unknown', 'smtp_unavailable');
  });
});

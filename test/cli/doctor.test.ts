/**
 * `mailverdict doctor` through the real CLI, against an in-process DNS server (MX, A, PTR, TXT/SPF
 * and DNSBL answers, the refused-query codes among them) and SMTP servers on loopback. Nothing
 * here asks a real resolver: every run names the test DNS server, reference domain and zones.
 * Source addresses are 127.0.0.20 and up (the SMTP kit's hosts are 127.0.0.2 and up).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DoctorCheck, DoctorReport } from '../../src/services/prober/doctor.service.js';
import { startSocksProxy, type SocksProxy } from '../kit/socks-proxy.js';
import { startDnsServer, type FakeDnsServer } from '../kit/dns-server.js';
import { REPLIES, startSmtpServers, type SmtpKit } from '../kit/smtp-servers.js';
import { cleanEnv, runCli, spawnCli } from '../kit/cli.js';

let dns: FakeDnsServer;
let smtp: SmtpKit;
/** A SOCKS5 proxy whose exit address is 127.0.0.25. */
let proxy: SocksProxy;

const ptr = (last: number): string => `${last}.0.0.127.in-addr.arpa`;

beforeAll(async () => {
  smtp = await startSmtpServers({
    good: { kind: 'mta', mailboxes: ['postmaster'] },
    closed: { kind: 'refuse' },
    blocking: { kind: 'mta', bannerReply: REPLIES.spamhaus },
    busy: { kind: 'mta', bannerReply: REPLIES.bannerBusy },
  });
  const { good, closed, blocking, busy } = smtp.hosts as Record<string, { ip: string }>;
  dns = await startDnsServer({
    // Reference domains, one per kind of port-25 outcome.
    'reference.test': { mx: [{ exchange: 'mx.reference.test', priority: 10 }] },
    'mx.reference.test': { a: [good!.ip] },
    'closed.test': { mx: [{ exchange: 'mx.closed.test', priority: 10 }] },
    'mx.closed.test': { a: [closed!.ip] },
    'blocking.test': { mx: [{ exchange: 'mx.blocking.test', priority: 10 }] },
    'mx.blocking.test': { a: [blocking!.ip] },
    'busy.test': { mx: [{ exchange: 'mx.busy.test', priority: 10 }] },
    'mx.busy.test': { a: [busy!.ip] },

    // The sender domain: .20 may send, .21 soft-fails, .22 is neutral, anything else fails.
    'prober.test': {
      mx: [{ exchange: 'mx.prober.test', priority: 10 }],
      txt: ['v=spf1 ip4:127.0.0.20 ~ip4:127.0.0.21 ?ip4:127.0.0.22 -all'],
    },
    'mx.prober.test': { a: ['127.0.0.20'] },
    'nospf.test': { a: ['127.0.0.20'] },
    'nullmx.test': { a: ['127.0.0.20'] },

    // .20: everything right.
    'out20.prober.test': { a: ['127.0.0.20'] },
    [ptr(20)]: { ptr: ['out20.prober.test'] },
    // .21: its HELO name resolves, but it has no PTR; listed on bl-a.
    'out21.prober.test': { a: ['127.0.0.21'] },
    '21.0.0.127.bl-a.test': { a: ['127.0.0.2'], txt: ['Listed: see https://bl-a.test/127.0.0.21'] },
    // .22: forward-confirmed as another name than its HELO; bl-a refuses the query (public resolver).
    'out22.prober.test': { a: ['127.0.0.22'] },
    [ptr(22)]: { ptr: ['other22.prober.test'] },
    'other22.prober.test': { a: ['127.0.0.22'] },
    '22.0.0.127.bl-a.test': { a: ['127.255.255.254'] },
    // .23: its HELO name does not resolve; its PTR name does not resolve back; bl-a fails (SERVFAIL).
    [ptr(23)]: { ptr: ['ghost23.prober.test'] },
    // .24: everything the resolver cannot answer.
    // .1 (the default egress as the SMTP kit sees it): a PTR name that is not confirmed.
    [ptr(1)]: { ptr: ['box.isp.test'] },
    '1.0.0.127.bl-a.test': { a: ['127.255.255.255'] },
    // .25: the proxy's exit address, set up right, with its own sender domain.
    'out25.prober.test': { a: ['127.0.0.25'] },
    [ptr(25)]: { ptr: ['out25.prober.test'] },
    'proxy.test': { a: ['127.0.0.25'], txt: ['v=spf1 ip4:127.0.0.25 -all'] },
  });
  proxy = await startSocksProxy({ exitAddress: '127.0.0.25' });
  dns.setServfail('23.0.0.127.bl-a.test');
  dns.setServfail('out24.prober.test');
  dns.setServfail(ptr(24));
  dns.setServfail('flaky.test');
  dns.setNullMx('nullmx.test');
});

afterAll(async () => {
  await proxy?.close();
  await smtp?.close();
  await dns?.close();
});

/** The flags every run gets: the test DNS server, the kit's port, test zones. */
function base(referenceDomain = 'reference.test'): string[] {
  return [
    '--dns-server',
    dns.address,
    '--dns-timeout',
    '500ms',
    '--dns-tries',
    '1',
    '--smtp-port',
    String(smtp.port),
    '--allow-internal-targets',
    '--reference-domain',
    referenceDomain,
    '--dnsbl-zone',
    'bl-a.test,bl-b.test',
    // The resolver is judged by names of the test zone (no real root on loopback).
    '--dns-trust-name',
    'reference.test,prober.test',
    '--dns-trust-absent-zone',
    'test',
    '--timeout-ms',
    '2000',
  ];
}

async function doctorJson(...args: string[]): Promise<{ code: number | null; report: DoctorReport }> {
  const run = await runCli(['doctor', '--json', ...args]);
  const lines = run.stdout.trim().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  return { code: run.code, report: JSON.parse(lines[0]!) as DoctorReport };
}

function find(report: DoctorReport, id: string, egress?: string): DoctorCheck[] {
  return report.checks.filter((c) => c.id === id && (egress === undefined || c.egress === egress));
}

function one(report: DoctorReport, id: string, egress?: string): DoctorCheck {
  const found = find(report, id, egress);
  expect(found, `${id} ${egress ?? ''}`).toHaveLength(1);
  return found[0]!;
}

describe.concurrent('mailverdict doctor', () => {
  it('passes every check of a well set-up egress and exits 0, as one JSON line of the documented shape', async () => {
    const { code, report } = await doctorJson(
      ...base(),
      '--source-address',
      '127.0.0.20=out20.prober.test',
      '--mail-from',
      'verify@prober.test',
    );
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    const ids = new Set(report.checks.map((c) => c.id));
    for (const id of [
      'dns_resolver',
      'port25',
      'helo_fqdn',
      'helo_resolves',
      'reverse_dns',
      'helo_matches_reverse_dns',
      'mail_from_domain',
      'spf',
      'dnsbl',
    ])
      expect(ids).toContain(id);
    for (const check of report.checks) {
      expect(check.status, check.message).toBe('pass');
      expect(Object.keys(check).sort()).toEqual(
        check.id === 'mail_from_domain' || check.id === 'dns_resolver'
          ? ['id', 'message', 'status']
          : ['egress', 'id', 'message', 'status'],
      );
      if (check.id !== 'mail_from_domain' && check.id !== 'dns_resolver')
        expect(check.egress).toBe('127.0.0.20');
    }
    expect(find(report, 'dnsbl').map((c) => c.message)).toEqual([
      '127.0.0.20 is not listed on bl-a.test',
      '127.0.0.20 is not listed on bl-b.test',
    ]);
    expect(one(report, 'port25').message).toContain('sees this egress as 127.0.0.20');
    expect(smtp.hosts.good!.commands).toContain('EHLO out20.prober.test');
  });

  it("checks a proxy's exit address, learnt from the mail server's EHLO reply", async () => {
    const { code, report } = await doctorJson(
      ...base(),
      '--proxy',
      proxy.url,
      '--helo',
      'out25.prober.test',
      '--mail-from',
      'verify@proxy.test',
    );
    expect(code).toBe(0);
    const egress = proxy.url;
    expect(one(report, 'port25', egress).message).toContain('sees this egress as 127.0.0.25');
    expect(one(report, 'reverse_dns', egress).message).toBe(
      '127.0.0.25 has reverse DNS out25.prober.test, forward-confirmed',
    );
    expect(one(report, 'spf', egress).status).toBe('pass');
    expect(report.checks.every((c) => c.status === 'pass')).toBe(true);
  });

  it('says what is wrong with each egress, and exits 1 when a check fails', async () => {
    const { code, report } = await doctorJson(
      ...base(),
      '--source-address',
      '127.0.0.21=out21.prober.test,127.0.0.22=out22.prober.test,127.0.0.23=out23.prober.test,127.0.0.24=out24.prober.test',
      '--mail-from',
      'verify@prober.test',
    );
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    const status = (id: string, egress: string): string => one(report, id, egress).status;

    // .21: resolves, no PTR, SPF softfail, listed with the list's reason.
    expect(status('helo_resolves', '127.0.0.21')).toBe('pass');
    expect(one(report, 'reverse_dns', '127.0.0.21')).toMatchObject({
      status: 'fail',
      message: '127.0.0.21 has no reverse DNS (PTR) name',
    });
    expect(status('helo_matches_reverse_dns', '127.0.0.21')).toBe('warn');
    expect(one(report, 'spf', '127.0.0.21')).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('softfail'),
    });
    const listed = find(report, 'dnsbl', '127.0.0.21');
    expect(listed[0]).toMatchObject({
      status: 'fail',
      message: '127.0.0.21 is listed on bl-a.test (127.0.0.2): Listed: see https://bl-a.test/127.0.0.21',
    });
    expect(listed[1]!.status).toBe('pass');

    // .22: confirmed under another name; SPF neutral; the list refused the query.
    expect(status('reverse_dns', '127.0.0.22')).toBe('pass');
    expect(one(report, 'helo_matches_reverse_dns', '127.0.0.22')).toMatchObject({
      status: 'warn',
      fix: 'set --source-address 127.0.0.22=other22.prober.test',
    });
    expect(one(report, 'spf', '127.0.0.22')).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('neutral'),
    });
    expect(find(report, 'dnsbl', '127.0.0.22')[0]).toMatchObject({
      status: 'warn',
      message: expect.stringMatching(
        /^cannot tell whether 127\.0\.0\.22 is listed on bl-a\.test: it answered 127\.255\.255\.254/,
      ),
      fix: expect.stringContaining('use your own resolver'),
    });

    // .23: HELO name and PTR name unresolvable, SPF fail, list SERVFAIL.
    expect(status('helo_resolves', '127.0.0.23')).toBe('fail');
    expect(one(report, 'reverse_dns', '127.0.0.23')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('not forward-confirmed'),
    });
    expect(one(report, 'spf', '127.0.0.23')).toMatchObject({
      status: 'fail',
      fix: 'publish (or extend) the TXT record of prober.test: "v=spf1 ip4:127.0.0.23 -all"',
    });
    expect(find(report, 'dnsbl', '127.0.0.23')[0]).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('DNS ESERVFAIL'),
    });

    // .24: the resolver fails: cannot tell, never pass or fail.
    expect(status('helo_resolves', '127.0.0.24')).toBe('warn');
    expect(status('reverse_dns', '127.0.0.24')).toBe('warn');

    for (const egress of ['127.0.0.21', '127.0.0.22', '127.0.0.23', '127.0.0.24']) {
      expect(status('port25', egress)).toBe('pass');
      expect(status('helo_fqdn', egress)).toBe('pass');
    }
    expect(one(report, 'mail_from_domain').status).toBe('pass');
  });

  it('with HELO name localhost (a fresh install), fails the HELO name and the sender domain, learns the address from the EHLO reply, and prints a table', async () => {
    // A host whose own name is fully qualified would greet with it: this is the other case.
    const run = await runCli(['doctor', ...base(), '--helo', 'localhost']);
    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^STATUS +CHECK +EGRESS +MESSAGE$/);
    expect(run.stdout).toMatch(
      /FAIL +mail_from_domain +- +MAIL FROM domain 'localhost' \(of verify@localhost\) is not fully qualified\n +fix: set --mail-from/,
    );
    expect(run.stdout).toMatch(
      /FAIL +helo_fqdn +default +HELO name 'localhost' is not fully qualified\n +fix: set --helo to the egress's reverse-DNS name/,
    );
    expect(run.stdout).toMatch(
      /PASS +port25 +default +mx\.reference\.test .* sees this egress as 127\.0\.0\.1/,
    );
    expect(run.stdout).toMatch(
      /FAIL +reverse_dns +default +127\.0\.0\.1 has reverse DNS box\.isp\.test, but it does not resolve back/,
    );
    expect(run.stdout).toMatch(
      /WARN +dnsbl +default +cannot tell whether 127\.0\.0\.1 is listed on bl-a\.test: it answered 127\.255\.255\.255/,
    );
    expect(run.stdout).toMatch(/\n\d+ failed, \d+ warnings, \d+ passed\n$/);
  });

  it('fails port25 when nothing answers on port 25, and then cannot tell the address-based checks', async () => {
    const { code, report } = await doctorJson(...base('closed.test'), '--mail-from', 'verify@nullmx.test');
    expect(code).toBe(1);
    expect(one(report, 'port25')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('no MX host of closed.test could be reached'),
      fix: expect.stringContaining('outbound port 25 is blocked'),
    });
    for (const id of ['reverse_dns', 'spf', 'dnsbl'])
      expect(one(report, id)).toMatchObject({
        status: 'warn',
        message: expect.stringContaining('cannot tell'),
      });
    expect(one(report, 'mail_from_domain')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('null MX'),
    });
  });

  it('fails port25 when the mail host refuses the prober, and learns the address its refusal names', async () => {
    const { report } = await doctorJson(...base('blocking.test'), '--mail-from', 'verify@nowhere.test');
    expect(one(report, 'port25')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('refused at banner: 554'),
    });
    expect(one(report, 'reverse_dns').message).toContain('127.0.0.1 has reverse DNS box.isp.test');
    expect(one(report, 'mail_from_domain')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('NXDOMAIN'),
    });
  });

  it('warns on port25 for a temporary refusal, and when the reference domain cannot be resolved', async () => {
    const busy = await doctorJson(...base('busy.test'), '--mail-from', 'verify@flaky.test');
    expect(one(busy.report, 'port25')).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('421'),
    });
    expect(one(busy.report, 'mail_from_domain')).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('cannot tell'),
    });
    const unknown = await doctorJson(...base('nxdomain.test'), '--mail-from', 'verify@nospf.test');
    expect(one(unknown.report, 'port25')).toMatchObject({
      status: 'warn',
      message: "cannot tell: the reference domain 'nxdomain.test' gives nxdomain",
    });
    expect(one(unknown.report, 'mail_from_domain')).toMatchObject({ status: 'pass' });
  });

  it('fails dns_resolver, naming --dns-server, against a resolver that answers NXDOMAIN for every name', async () => {
    const lying = await startDnsServer();
    try {
      const args = base('reference.test');
      args[args.indexOf('--dns-server') + 1] = lying.address;
      const { code, report } = await doctorJson(...args, '--mail-from', 'verify@prober.test');
      expect(code).toBe(1);
      expect(report.ok).toBe(false);
      expect(one(report, 'dns_resolver')).toMatchObject({
        status: 'fail',
        message: expect.stringContaining('not trusted: the resolver denies 2 of 2 names that must exist'),
        fix: expect.stringContaining('--dns-server'),
      });
      // Its NXDOMAIN is not taken for the truth: the reference domain and the sender domain cannot be told.
      expect(one(report, 'port25')).toMatchObject({
        status: 'warn',
        fix: expect.stringContaining('--dns-server'),
      });
      expect(one(report, 'mail_from_domain')).toMatchObject({
        status: 'warn',
        message: expect.stringContaining('cannot tell'),
        fix: expect.stringContaining('--dns-server'),
      });
    } finally {
      await lying.close();
    }
  });

  it('does not take an internal source address for the one mail servers see', async () => {
    const args = base().filter((a) => a !== '--allow-internal-targets');
    const { report } = await doctorJson(...args, '--source-address', '127.0.0.26=out26.prober.test');
    // Without --allow-internal-targets the loopback MX of the reference domain is not probed either.
    expect(one(report, 'port25')).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('no mail host it may probe'),
    });
    for (const id of ['reverse_dns', 'spf', 'dnsbl'])
      expect(one(report, id)).toMatchObject({
        status: 'warn',
        message: 'cannot tell: 127.0.0.26 is an internal address, not the one mail servers see (NAT)',
      });
  });

  it('exits 2 on bad usage', async () => {
    const unknownFlag = await runCli(['doctor', '--no-such-flag'], cleanEnv());
    expect(unknownFlag.code).toBe(2);
    const badServer = await runCli(['doctor', '--dns-server', 'resolver.example']);
    expect(badServer.code).toBe(2);
    expect(badServer.stderr).toContain('--dns-server');
  });
});

/** Starts a service command on a fresh data directory, waits for `event`, and returns the doctor's warnings. */
async function startupLog(command: 'serve' | 'worker', event: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mailverdict-doctor-'));
  const extra = command === 'serve' ? ['--port', '0', '--no-embedded-workers'] : [];
  // --helo localhost: what a host whose name is not fully qualified greets with by default.
  const child = spawnCli([command, '--data-dir', dir, '--json', '--helo', 'localhost', ...extra]);
  try {
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes(`"${event}"`)) resolve();
      });
      child.on('exit', (code) => reject(new Error(`${command} exited ${code}: ${stderr}`)));
    });
    // The log is written asynchronously: wait for both lines.
    for (
      const until = Date.now() + 30_000;
      (stderr.match(/not fully qualified/g) ?? []).length < 2 && Date.now() < until;
    )
      await new Promise((resolve) => setTimeout(resolve, 100));
    return (
      stderr
        .split('\n')
        .filter((l) => l.includes('"level":40'))
        .map((l) => (JSON.parse(l) as { msg: string }).msg)
        // Other start-up warnings (no Redis for a worker) are not the doctor's.
        .filter((msg) => msg.includes('mailverdict doctor'))
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

const FRESH_INSTALL_WARNINGS = [
  "MAIL FROM domain 'localhost' (of verify@localhost) is not fully qualified: set --mail-from to an address at a domain you own, with MX or A records and an SPF record; see `mailverdict doctor`",
  "HELO name 'localhost' is not fully qualified: set --helo to the egress's reverse-DNS name; see `mailverdict doctor`",
];

describe.concurrent('serve and worker at start-up', () => {
  it('serve warns once about each offline problem and starts all the same', async () => {
    expect(await startupLog('serve', 'listening')).toEqual(FRESH_INSTALL_WARNINGS);
  });

  it('worker does the same', async () => {
    expect(await startupLog('worker', 'worker_started')).toEqual(FRESH_INSTALL_WARNINGS);
  });
});

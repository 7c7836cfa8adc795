import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MailHost } from '../../src/engine/outcome.js';
import { SmtpCommandError, SmtpConnection } from '../../src/engine/smtp/connection.js';
import type { ProberDeps, ProberOptions } from '../../src/engine/probe.js';
import { SmtpProber } from '../../src/engine/probe.js';
import type { KitHost, SmtpKit } from '../kit/smtp-servers.js';
import { REPLIES, startSmtpServers } from '../kit/smtp-servers.js';
import { startSocksProxy, type SocksProxy } from '../kit/socks-proxy.js';
import { WAIT_FOR } from '../kit/wait-for.js';

let kit: SmtpKit;
const probers: SmtpProber[] = [];

beforeAll(async () => {
  kit = await startSmtpServers({
    good: { kind: 'mta', mailboxes: ['alice', 'bob'] },
    catchall: { kind: 'mta', catchAll: true },
    nopipe: { kind: 'mta', mailboxes: ['alice'], pipelining: false },
    tls: { kind: 'mta', mailboxes: ['alice'], tls: 'require' },
    busy: { kind: 'mta', bannerReply: REPLIES.bannerBusy },
    refuse: { kind: 'refuse' },
    refuse2: { kind: 'refuse' },
    refuse3: { kind: 'refuse' },
    silent: { kind: 'silent' },
    drop: { kind: 'raw', dropAt: 'RCPT' },
    tarpit: { kind: 'mta', mailboxes: ['alice'], stallUnknown: true },
    heloOnly: { kind: 'raw', refuseEhlo: true },
    brokenTls: { kind: 'raw', brokenStarttls: true },
    mailRefused: { kind: 'mta', mailReply: REPLIES.spamhaus },
    slow: { kind: 'mta', mailboxes: ['alice'], delayMs: 150 },
    utf8: { kind: 'mta', mailboxes: ['jörg'] },
    noUtf8: { kind: 'mta', mailboxes: ['jörg'], smtpUtf8: false },
    noUtf8Tls: { kind: 'mta', mailboxes: ['jörg'], tls: 'offer', smtpUtf8: false },
  });
});

afterAll(async () => {
  await kit.close();
});

beforeEach(() => {
  kit.resetRecords();
});

afterEach(async () => {
  await Promise.all(probers.splice(0).map((prober) => prober.close()));
});

function makeProber(overrides: Partial<ProberOptions> = {}, deps: ProberDeps = {}): SmtpProber {
  const prober = new SmtpProber(
    {
      port: kit.port,
      heloName: 'probe.mailverdict.test',
      mailFrom: 'verify@probe.mailverdict.test',
      proxies: [],
      maxMxHosts: 3,
      catchAllTtlMs: 60_000,
      ...overrides,
    },
    deps,
  );
  probers.push(prober);
  return prober;
}

function mx(...names: string[]): MailHost[] {
  return names.map((name, i) => ({
    exchange: `${name}.mx.test`,
    priority: 10 * (i + 1),
    addresses: [kit.hosts[name]!.ip],
  }));
}

function probe(prober: SmtpProber, address: string, hosts: MailHost[], timeoutMs = 3000) {
  return prober.probe({ address, domain: address.slice(address.lastIndexOf('@') + 1), hosts, timeoutMs });
}

/** The QUIT goes out after the verdict; wait for it before asserting what reached the host. */
async function dialogueOf(host: KitHost): Promise<string[]> {
  await vi.waitFor(() => expect(host.commands).toContain('QUIT'), WAIT_FOR);
  return host.commands;
}

describe('SmtpProber', () => {
  it('accepts an existing mailbox and tests catch-all with a second RCPT, never sending DATA', async () => {
    const outcome = await probe(makeProber({}, { random: () => 0 }), 'alice@good.test', mx('good'));
    expect(outcome).toMatchObject({
      kind: 'accepted',
      catchAll: false,
      evidence: { host: 'good.mx.test', code: 250, tls: false },
    });
    expect(await dialogueOf(kit.hosts.good!)).toEqual([
      'EHLO probe.mailverdict.test',
      'MAIL FROM:<verify@probe.mailverdict.test>',
      'RCPT TO:<alice@good.test>',
      `RCPT TO:<${'a'.repeat(24)}@good.test>`,
      'QUIT',
    ]);
  });

  it('reports an unknown mailbox as rejected with the reply as evidence', async () => {
    const outcome = await probe(makeProber(), 'nobody@good.test', mx('good'));
    expect(outcome.kind).toBe('rejected');
    expect(outcome.evidence).toMatchObject({ host: 'good.mx.test', code: 550, enhancedCode: '5.1.1' });
    expect(outcome.evidence.message).toContain('User unknown');
  });

  it('detects a catch-all domain', async () => {
    const outcome = await probe(makeProber(), 'anyone@catchall.test', mx('catchall'));
    expect(outcome).toMatchObject({ kind: 'accepted', catchAll: true });
  });

  it('sends one RCPT per session once the domain catch-all answer is cached', async () => {
    const prober = makeProber();
    await probe(prober, 'first@catchall.test', mx('catchall'));
    await dialogueOf(kit.hosts.catchall!);
    kit.resetRecords();

    const outcome = await probe(prober, 'second@catchall.test', mx('catchall'));
    expect(outcome).toMatchObject({ kind: 'accepted', catchAll: true });
    const rcpts = (await dialogueOf(kit.hosts.catchall!)).filter((line) => line.startsWith('RCPT'));
    expect(rcpts).toEqual(['RCPT TO:<second@catchall.test>']);
  });

  it('asks again once the cached catch-all answer has expired', async () => {
    let now = Date.parse('2026-01-15T12:00:00Z');
    const prober = makeProber({ catchAllTtlMs: 60_000 }, { clock: () => now });
    await probe(prober, 'first@catchall.test', mx('catchall'));
    await dialogueOf(kit.hosts.catchall!);
    kit.resetRecords();
    now += 60_001;

    await probe(prober, 'second@catchall.test', mx('catchall'));
    const rcpts = (await dialogueOf(kit.hosts.catchall!)).filter((line) => line.startsWith('RCPT'));
    expect(rcpts).toHaveLength(2);
  });

  it('works command by command when PIPELINING is not offered', async () => {
    const outcome = await probe(makeProber(), 'alice@nopipe.test', mx('nopipe'));
    expect(outcome).toMatchObject({ kind: 'accepted', catchAll: false });
    expect((await dialogueOf(kit.hosts.nopipe!)).filter((line) => line.startsWith('RCPT'))).toHaveLength(2);
  });

  it('does not wait for the catch-all answer when the recipient was refused (no pipelining)', async () => {
    const outcome = await probe(makeProber(), 'nobody@nopipe.test', mx('nopipe'));
    expect(outcome.kind).toBe('rejected');
    expect((await dialogueOf(kit.hosts.nopipe!)).filter((line) => line.startsWith('RCPT'))).toEqual([
      'RCPT TO:<nobody@nopipe.test>',
    ]);
  });

  it('keeps a decided answer when the catch-all RCPT runs out of time', async () => {
    const outcome = await probe(makeProber(), 'alice@tarpit.test', mx('tarpit'), 600);
    expect(outcome).toMatchObject({ kind: 'accepted', catchAll: null, evidence: { code: 250 } });
  });

  it('upgrades to TLS when STARTTLS is offered and greets again', async () => {
    const outcome = await probe(makeProber(), 'alice@tls.test', mx('tls'));
    expect(outcome).toMatchObject({ kind: 'accepted', evidence: { tls: true } });
    expect(kit.hosts.tls!.tlsSessions).toBe(1);
    expect((await dialogueOf(kit.hosts.tls!)).slice(0, 4)).toEqual([
      'EHLO probe.mailverdict.test',
      'STARTTLS',
      'EHLO probe.mailverdict.test',
      'MAIL FROM:<verify@probe.mailverdict.test>',
    ]);
  });

  it('falls back to clear text on the same host when the TLS handshake fails', async () => {
    const outcome = await probe(makeProber(), 'alice@broken-tls.test', mx('brokenTls'));
    expect(outcome).toMatchObject({ kind: 'accepted', evidence: { tls: false } });
    expect(kit.hosts.brokenTls!.connections).toBe(2);
    expect(kit.hosts.brokenTls!.commands.filter((line) => line === 'STARTTLS')).toHaveLength(1);
  });

  it('falls back to HELO when EHLO is refused', async () => {
    const outcome = await probe(makeProber(), 'alice@helo-only.test', mx('heloOnly'));
    expect(outcome.kind).toBe('accepted');
    expect(kit.hosts.heloOnly!.commands.slice(0, 3)).toEqual([
      'EHLO probe.mailverdict.test',
      'HELO probe.mailverdict.test',
      'MAIL FROM:<verify@probe.mailverdict.test>',
    ]);
  });

  it('moves to the next MX when the first refuses the connection', async () => {
    const outcome = await probe(makeProber(), 'alice@good.test', mx('refuse', 'good'));
    expect(outcome).toMatchObject({ kind: 'accepted', evidence: { host: 'good.mx.test' } });
  });

  it('moves to the next MX when the first answers 421 at the banner', async () => {
    const outcome = await probe(makeProber(), 'alice@good.test', mx('busy', 'good'));
    expect(outcome).toMatchObject({ kind: 'accepted', evidence: { host: 'good.mx.test' } });
    expect(kit.hosts.busy!.connections).toBe(1);
  });

  it('moves to the next MX when the first stays silent, within the same budget', async () => {
    const outcome = await probe(makeProber(), 'alice@good.test', mx('silent', 'good'), 1000);
    expect(outcome).toMatchObject({ kind: 'accepted', evidence: { host: 'good.mx.test' } });
  });

  it('moves to the next MX when the first drops the connection mid-dialogue', async () => {
    const outcome = await probe(makeProber(), 'alice@good.test', mx('drop', 'good'));
    expect(outcome).toMatchObject({ kind: 'accepted', evidence: { host: 'good.mx.test' } });
    expect(kit.hosts.drop!.commands).toContain('RCPT TO:<alice@good.test>');
  });

  it('is unavailable when the only MX drops the connection mid-dialogue', async () => {
    const outcome = await probe(makeProber(), 'alice@drop.test', mx('drop'));
    expect(outcome).toMatchObject({ kind: 'unavailable', evidence: { host: 'drop.mx.test', code: null } });
  });

  it('is unavailable when every MX refuses or answers 421', async () => {
    const outcome = await probe(makeProber(), 'alice@down.test', mx('refuse', 'busy', 'refuse2'));
    expect(outcome.kind).toBe('unavailable');
    expect(outcome.evidence.message).toContain('ECONNREFUSED');
  });

  it('tries at most maxMxHosts hosts', async () => {
    const outcome = await probe(
      makeProber({ maxMxHosts: 3 }),
      'alice@good.test',
      mx('refuse', 'refuse2', 'refuse3', 'good'),
    );
    expect(outcome.kind).toBe('unavailable');
    expect(kit.hosts.good!.connections).toBe(0);
  });

  it('times out on a silent host within the budget', async () => {
    const outcome = await probe(makeProber(), 'alice@silent.test', mx('silent'), 300);
    expect(outcome).toMatchObject({ kind: 'timeout', evidence: { host: 'silent.mx.test', code: null } });
  });

  it('waits for a slow host that answers within the budget', async () => {
    const outcome = await probe(makeProber(), 'alice@slow.test', mx('slow'), 5000);
    expect(outcome).toMatchObject({ kind: 'accepted', evidence: { host: 'slow.mx.test', code: 250 } });
  });

  it('times out on a slow host whose replies need more than the budget', async () => {
    // Banner, MAIL and RCPT are each delayed by 150 ms: more than 300 ms in all.
    const outcome = await probe(makeProber(), 'alice@slow.test', mx('slow'), 300);
    expect(outcome.kind).toBe('timeout');
  });

  it('reports a refusal at MAIL FROM as blocked, with that reply as evidence', async () => {
    const outcome = await probe(makeProber(), 'alice@blocked.test', mx('mailRefused'));
    expect(outcome).toMatchObject({ kind: 'blocked', evidence: { code: 554, enhancedCode: '5.7.1' } });
  });

  it('leaves no timer behind once the sessions are over', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    const before = timers();
    const prober = makeProber();
    // Budgets far longer than waitFor's patience: a deadline timer left armed per session would
    // keep five timers alive; other timers of the process come and go, hence the margin.
    for (let i = 0; i < 5; i++) {
      expect((await probe(prober, `alice@timers${i}.test`, mx('good'), 5000)).kind).toBe('accepted');
    }
    await vi.waitFor(
      () => expect(kit.hosts.good!.commands.filter((line) => line === 'QUIT')).toHaveLength(5),
      WAIT_FOR,
    );
    await vi.waitFor(() => expect(timers()).toBeLessThan(before + 3), WAIT_FOR);
  });

  it('does not connect again to a host that just failed until its back-off ends, and says why', async () => {
    let now = 1_700_000_000_000;
    const prober = makeProber({ hostBackoffMs: 1_000 }, { clock: () => now });
    expect((await probe(prober, 'alice@busy.test', mx('busy'))).kind).toBe('unavailable');
    expect(kit.hosts.busy!.connections).toBe(1);

    const skipped = await probe(prober, 'bob@busy.test', mx('busy', 'good'));
    // The next MX answered; the resting one was not asked.
    expect(skipped).toMatchObject({ kind: 'accepted', evidence: { host: 'good.mx.test' } });
    const alone = await probe(prober, 'carol@busy.test', mx('busy'));
    expect(alone).toMatchObject({ kind: 'unavailable', evidence: { host: 'busy.mx.test', code: 421 } });
    expect(alone.evidence.message).toMatch(
      /^not asked: backed off after 1 failure\(s\) in a row \(last: banner: 421/,
    );
    expect(kit.hosts.busy!.connections).toBe(1);

    now += 1_000;
    expect((await probe(prober, 'dave@busy.test', mx('busy'))).kind).toBe('unavailable');
    expect(kit.hosts.busy!.connections).toBe(2);
  });

  it('answers a host that refused the prober from that refusal while it is backed off', async () => {
    const prober = makeProber({}, { clock: () => 1_700_000_000_000 });
    await probe(prober, 'alice@blocked.test', mx('mailRefused'));
    const again = await probe(prober, 'bob@blocked.test', mx('mailRefused', 'good'));
    expect(again).toMatchObject({ kind: 'blocked', evidence: { host: 'mailRefused.mx.test', code: 554 } });
    expect(kit.hosts.mailRefused!.connections).toBe(1);
    expect(kit.hosts.good!.connections).toBe(0);
  });

  it('ends a host failure streak with an answer about a recipient, not with a greeting', async () => {
    let now = 1_700_000_000_000;
    const prober = makeProber({ hostBackoffMs: 1_000 }, { clock: () => now });
    // Greeted, then the line dropped at RCPT: a failure each time, the back-off doubling.
    await probe(prober, 'alice@drop.test', mx('drop'));
    now += 1_000;
    await probe(prober, 'alice@drop.test', mx('drop'));
    now += 1_000;
    // The second failure backed it off for 2 s: 1 s later it still rests.
    await probe(prober, 'alice@drop.test', mx('drop'));
    expect(kit.hosts.drop!.connections).toBe(2);
  });

  it('ends as unavailable, without waiting out its budget, when closed mid-probe', async () => {
    const prober = makeProber();
    const pending = probe(prober, 'alice@silent.test', mx('silent'), 5000);
    await vi.waitFor(() => expect(kit.hosts.silent!.connections).toBe(1), WAIT_FOR);
    await prober.close();
    expect((await pending).kind).toBe('unavailable');
  });
});

describe('SmtpProber and SMTPUTF8 (RFC 6531)', () => {
  it('asks about a non-ASCII local part with SMTPUTF8 on MAIL FROM where the host offers it', async () => {
    const outcome = await probe(makeProber({}, { random: () => 0 }), 'jörg@utf8.test', mx('utf8'));
    expect(outcome).toMatchObject({ kind: 'accepted', catchAll: false });
    expect(await dialogueOf(kit.hosts.utf8!)).toEqual([
      'EHLO probe.mailverdict.test',
      'MAIL FROM:<verify@probe.mailverdict.test> SMTPUTF8',
      'RCPT TO:<jörg@utf8.test>',
      `RCPT TO:<${'a'.repeat(24)}@utf8.test>`,
      'QUIT',
    ]);
  });

  it('writes neither MAIL FROM nor RCPT for a non-ASCII local part where SMTPUTF8 is not offered', async () => {
    const outcome = await probe(makeProber(), 'jörg@no-utf8.test', mx('noUtf8'));
    expect(outcome).toMatchObject({
      kind: 'unicode_unsupported',
      catchAll: null,
      evidence: { host: 'noUtf8.mx.test', code: null, enhancedCode: null, tls: false },
    });
    expect(outcome.evidence.message).toContain('SMTPUTF8');
    expect(await dialogueOf(kit.hosts.noUtf8!)).toEqual(['EHLO probe.mailverdict.test', 'QUIT']);
  });

  it('decides on the extensions of the EHLO after STARTTLS', async () => {
    const outcome = await probe(makeProber(), 'jörg@no-utf8-tls.test', mx('noUtf8Tls'));
    expect(outcome).toMatchObject({ kind: 'unicode_unsupported', evidence: { tls: true } });
    expect(await dialogueOf(kit.hosts.noUtf8Tls!)).toEqual([
      'EHLO probe.mailverdict.test',
      'STARTTLS',
      'EHLO probe.mailverdict.test',
      'QUIT',
    ]);
  });

  it('lets the first host that greets decide, without trying the next MX', async () => {
    const outcome = await probe(makeProber(), 'jörg@mixed.test', mx('noUtf8', 'utf8'));
    expect(outcome).toMatchObject({ kind: 'unicode_unsupported', evidence: { host: 'noUtf8.mx.test' } });
    expect(kit.hosts.utf8!.connections).toBe(0);
  });
});

describe('CR/LF never reaches the wire', () => {
  async function connect(host: KitHost): Promise<SmtpConnection> {
    const connection = await SmtpConnection.open({
      address: host.ip,
      port: kit.port,
      deadlineAt: performance.now() + 3000,
    });
    await connection.ehlo('probe.mailverdict.test');
    return connection;
  }

  it('refuses a command line with CR, LF or NUL before writing anything', async () => {
    const connection = await connect(kit.hosts.good!);
    for (const line of [
      'RCPT TO:<a@good.test>\r\nDATA',
      'RCPT TO:<a@good.test>\nRSET',
      'NOOP\r',
      'NOOP\0RSET',
    ]) {
      expect(() => connection.command(line)).toThrow(SmtpCommandError);
    }
    expect(() => connection.pipeline(['MAIL FROM:<a@b.test>', 'RCPT TO:<x@good.test>\r\nDATA'])).toThrow(
      SmtpCommandError,
    );
    connection.quit();
    expect(await dialogueOf(kit.hosts.good!)).toEqual(['EHLO probe.mailverdict.test', 'QUIT']);
  });

  it('refuses a HELO name with a line break', async () => {
    const connection = await SmtpConnection.open({
      address: kit.hosts.good!.ip,
      port: kit.port,
      deadlineAt: performance.now() + 3000,
    });
    await expect(connection.ehlo('probe.test\r\nRSET')).rejects.toThrow(SmtpCommandError);
    connection.quit();
    expect(await dialogueOf(kit.hosts.good!)).toEqual(['QUIT']);
  });

  it('rejects a probe for an address with CR/LF, with no RCPT, RSET or DATA sent', async () => {
    const prober = makeProber();
    await expect(
      probe(prober, 'a@good.test>\r\nRSET\r\nDATA\r\nRCPT TO:<b@good.test', mx('good')),
    ).rejects.toThrow(SmtpCommandError);
    const commands = await dialogueOf(kit.hosts.good!);
    expect(commands.filter((line) => /^(RCPT|RSET|DATA|MAIL)/.test(line))).toEqual([]);
  });
});

describe('SmtpProber through a SOCKS5 proxy', () => {
  let proxy: SocksProxy;

  beforeAll(async () => {
    proxy = await startSocksProxy({ credentials: { user: 'prober', password: 's3cret' } });
  });

  afterAll(async () => {
    await proxy.close();
  });

  it('connects to the MX through the proxy with its credentials', async () => {
    const prober = makeProber({ proxies: [proxy.urlWith('prober', 's3cret')] });
    const outcome = await probe(prober, 'alice@good.test', mx('good'));
    expect(outcome.kind).toBe('accepted');
    expect(proxy.connects.at(-1)).toEqual({ user: 'prober', host: kit.hosts.good!.ip, port: kit.port });
  });

  it('is unavailable when the proxy refuses the credentials, without touching the MX', async () => {
    const prober = makeProber({ proxies: [proxy.urlWith('prober', 'wrong')] });
    const outcome = await probe(prober, 'alice@good.test', mx('good'));
    expect(outcome.kind).toBe('unavailable');
    expect(outcome.evidence.message).toContain('SOCKS5 proxy');
    expect(kit.hosts.good!.connections).toBe(0);
  });
});

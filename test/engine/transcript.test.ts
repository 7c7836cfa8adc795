/**
 * The SMTP conversation on request (`verify(address, { transcript: true })`), through real sockets
 * to the kit's mail hosts: every command the hosts received and every reply line, in order, across
 * every MX host tried; the STARTTLS handshake as one line; the catch-all probe's RCPT.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TranscriptLine, Verifier } from '../../src/engine/index.js';
import { createVerifier } from '../../src/engine/index.js';
import { SmtpConnection } from '../../src/engine/smtp/connection.js';
import { TranscriptRecorder } from '../../src/engine/smtp/transcript.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import { kitEngineOptions } from '../kit/engine-options.js';
import type { KitHost, SmtpKit } from '../kit/smtp-servers.js';
import { startSmtpServers } from '../kit/smtp-servers.js';
import { WAIT_FOR } from '../kit/wait-for.js';

let kit: SmtpKit;
let dns: FakeDnsServer;
let verifier: Verifier;
let domains = 0;

/** A fresh domain (so that the catch-all answer is never cached) whose MX hosts are `hosts`. */
function route(...hosts: string[]): string {
  const domain = `d${++domains}.test`;
  dns.setDomain(domain, {
    mx: hosts.map((_, i) => ({ exchange: `mx${i + 1}.${domain}`, priority: 10 * (i + 1) })),
  });
  hosts.forEach((host, i) => dns.setDomain(`mx${i + 1}.${domain}`, { a: [kit.hosts[host]!.ip] }));
  return domain;
}

const sent = (lines: TranscriptLine[]): string[] =>
  lines.filter((l) => l.dir === 'out' && !l.text.startsWith('[')).map((l) => l.text);
const markers = (lines: TranscriptLine[]): string[] =>
  lines.filter((l) => l.text.startsWith('[')).map((l) => l.text);

/**
 * The commands the host received for the verification: its QUIT, sent once the answer is known
 * (or never, for a session kept warm), ends the session but is no part of the transcript.
 */
async function commandsOf(host: KitHost): Promise<string[]> {
  await vi.waitFor(() => expect(host.commands).toContain('QUIT'), WAIT_FOR);
  return host.commands.filter((c) => c !== 'QUIT');
}

beforeAll(async () => {
  kit = await startSmtpServers({
    good: { kind: 'mta', mailboxes: ['alice'] },
    tls: { kind: 'mta', mailboxes: ['alice'], tls: 'offer' },
    serial: { kind: 'mta', mailboxes: ['alice'], pipelining: false },
    refuse: { kind: 'refuse' },
    brokenTls: { kind: 'raw', brokenStarttls: true },
  });
  dns = await startDnsServer();
  let tick = 0;
  // An injected clock: each reading is one millisecond later, so at_ms is known exactly.
  verifier = createVerifier(kitEngineOptions(dns.address, kit.port), { now: () => tick++ });
});

afterAll(async () => {
  await verifier.close();
  await kit.close();
  await dns.close();
});

beforeEach(() => kit.resetRecords());
// The probe does not wait for the reply to QUIT: let every transaction's QUIT arrive before the next test.
afterEach(async () => {
  const count = (host: KitHost, prefix: string): number =>
    host.commands.filter((c) => c.startsWith(prefix)).length;
  await vi.waitFor(
    () =>
      expect(Object.values(kit.hosts).every((h) => count(h, 'QUIT') >= count(h, 'MAIL FROM:'))).toBe(true),
    WAIT_FOR,
  );
});

describe('the transcript of a verification', () => {
  it('is absent unless asked for', async () => {
    const result = await verifier.verify(`alice@${route('good')}`);
    expect(result).not.toHaveProperty('transcript');
  });

  it('holds every command the host received and every reply line, in order, the catch-all RCPT too', async () => {
    const domain = route('good');
    const result = await verifier.verify(`alice@${domain}`, { transcript: true });
    const lines = result.transcript!;
    expect(sent(lines)).toEqual(await commandsOf(kit.hosts.good!));
    expect(sent(lines)).toEqual([
      'EHLO probe.mailverdict.test',
      'MAIL FROM:<verify@probe.mailverdict.test>',
      `RCPT TO:<alice@${domain}>`,
      expect.stringMatching(new RegExp(`^RCPT TO:<[a-z][a-z0-9]{23}@${domain.replace('.', '\\.')}>$`)),
    ]);
    expect(markers(lines)).toEqual([`[connect mx1.${domain} (${kit.hosts.good!.ip}) port ${kit.port}]`]);
    const received = lines.filter((l) => l.dir === 'in').map((l) => l.text);
    // Banner, the EHLO reply line by line (250- then a last 250 ), then MAIL, RCPT and the probe's RCPT.
    expect(received[0]).toMatch(/^220 /);
    const ehlo = received.slice(1, received.findIndex((t) => /^250 /.test(t)) + 1);
    expect(ehlo.length).toBeGreaterThan(1);
    expect(ehlo.slice(0, -1).every((t) => t.startsWith('250-'))).toBe(true);
    expect(ehlo).toContain('250-PIPELINING');
    expect(received.slice(1 + ehlo.length).map((t) => t.slice(0, 3))).toEqual(['250', '250', '550']);
    // The catch-all probe's RCPT was refused: the domain is not catch-all.
    expect(result.checks.catchAll.value).toBe(false);
  });

  it('counts at_ms from the start of the verification on the injected clock, never going back', async () => {
    const lines = (await verifier.verify(`alice@${route('good')}`, { transcript: true })).transcript!;
    expect(lines[0]!.at_ms).toBe(1);
    expect(lines.map((l) => l.at_ms)).toEqual(lines.map((_, i) => i + 1));
  });

  it('shows the STARTTLS handshake as one line between the 220 and the second EHLO', async () => {
    const result = await verifier.verify(`alice@${route('tls')}`, { transcript: true });
    const texts = result.transcript!.map((l) => `${l.dir} ${l.text}`);
    const handshakes = texts.filter((t) => t.includes('[TLS handshake'));
    expect(handshakes).toHaveLength(1);
    expect(handshakes[0]).toMatch(/^out \[TLS handshake: TLSv1\.[23], [A-Z0-9_-]+\]$/);
    const at = texts.indexOf(handshakes[0]!);
    expect(texts[at - 2]).toBe('out STARTTLS');
    expect(texts[at - 1]).toMatch(/^in 220 /);
    expect(texts[at + 1]).toBe('out EHLO probe.mailverdict.test');
    expect(result.checks.smtp.tls).toBe(true);
    expect(sent(result.transcript!)).toEqual(await commandsOf(kit.hosts.tls!));
  });

  it('sends one command per round trip to a host without PIPELINING, each reply after its command', async () => {
    const result = await verifier.verify(`alice@${route('serial')}`, { transcript: true });
    const afterBanner = result.transcript!.filter((l) => !l.text.startsWith('[')).slice(1);
    const dialogue = afterBanner.filter((l) => !l.text.startsWith('250-')).map((l) => l.dir);
    // EHLO/250, MAIL/250, RCPT/250, RCPT (catch-all)/550.
    expect(dialogue).toEqual(['out', 'in', 'out', 'in', 'out', 'in', 'out', 'in']);
  });

  it('covers every MX host tried, each marked, when the first refuses the connection', async () => {
    const domain = route('refuse', 'good');
    const result = await verifier.verify(`alice@${domain}`, { transcript: true });
    expect(result.status).toBe('deliverable');
    expect(markers(result.transcript!)).toEqual([
      `[connect mx1.${domain} (${kit.hosts.refuse!.ip}) port ${kit.port}]`,
      expect.stringMatching(/^\[refused: /),
      `[connect mx2.${domain} (${kit.hosts.good!.ip}) port ${kit.port}]`,
    ]);
    expect(result.transcript!.find((l) => l.text.startsWith('[refused'))!.dir).toBe('in');
    expect(sent(result.transcript!)).toEqual(await commandsOf(kit.hosts.good!));
  });

  it('marks a host it skipped because it is backed off after a failure', async () => {
    await verifier.verify(`alice@${route('refuse', 'good')}`);
    const domain = route('refuse', 'good');
    const result = await verifier.verify(`alice@${domain}`, { transcript: true });
    expect(markers(result.transcript!)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^\\[skip mx1\\.${domain.replace('.', '\\.')} \\(${kit.hosts.refuse!.ip}\\): not asked: backed off`,
        ),
      ),
      `[connect mx2.${domain} (${kit.hosts.good!.ip}) port ${kit.port}]`,
    ]);
  });

  it('shows a failed TLS handshake and the clear-text retry on a second connection', async () => {
    const domain = route('brokenTls');
    const result = await verifier.verify(`alice@${domain}`, { transcript: true });
    const texts = result.transcript!.map((l) => `${l.dir} ${l.text}`);
    const connect = `out [connect mx1.${domain} (${kit.hosts.brokenTls!.ip}) port ${kit.port}]`;
    expect(texts.filter((t) => t === connect)).toHaveLength(2);
    const failed = texts.findIndex((t) => t.startsWith('in [tls: '));
    expect(texts[failed - 1]).toMatch(/^in 220/);
    expect(texts[failed - 2]).toBe('out STARTTLS');
    expect(texts[failed + 1]).toBe(connect);
    const retry = texts.slice(failed + 1).filter((t) => t.startsWith('out '));
    expect(retry.join('\n')).not.toMatch(/STARTTLS|TLS handshake/);
    expect(texts).toContain(`out RCPT TO:<alice@${domain}>`);
  });

  it('never holds CR or LF, and an address with CR/LF reaches no host', async () => {
    const result = await verifier.verify(`alice\r\nRSET@${route('good')}`, { transcript: true });
    expect(result.reason).toBe('invalid_email_format');
    expect(result.transcript).toEqual([]);
    expect(kit.allCommands()).toEqual([]);
    const ok = await verifier.verify(`alice@${route('tls')}`, { transcript: true });
    expect(ok.transcript!.some((l) => /[\r\n]/.test(l.text))).toBe(false);
  });

  it('is empty when no host was asked (no MX)', async () => {
    dns.setDomain('nomx.test', {});
    const result = await verifier.verify('alice@nomx.test', { transcript: true });
    expect(result.transcript).toEqual([]);
  });

  it('keeps concurrent verifications of one host apart', async () => {
    const domain = route('good');
    const [a, b] = await Promise.all([
      verifier.verify(`alice@${domain}`, { transcript: true }),
      verifier.verify(`bob@${domain}`, { transcript: true }),
    ]);
    expect(sent(a.transcript!)).toContain(`RCPT TO:<alice@${domain}>`);
    expect(sent(a.transcript!).join('\n')).not.toContain('bob@');
    expect(sent(b.transcript!)).toContain(`RCPT TO:<bob@${domain}>`);
    expect(sent(b.transcript!).join('\n')).not.toContain('alice@');
  });
});

describe('the recorder hook of a connection', () => {
  it('is attached per user: a reused connection records only to the recorder attached now', async () => {
    const first = new TranscriptRecorder();
    const connection = await SmtpConnection.open({
      address: kit.hosts.good!.ip,
      port: kit.port,
      deadlineAt: performance.now() + 2000,
      recorder: first,
    });
    await connection.ehlo('probe.mailverdict.test');
    const second = new TranscriptRecorder();
    connection.recorder = second;
    await connection.command('NOOP');
    connection.recorder = null;
    await connection.command('RSET');
    connection.quit();
    const firstTexts = first.seal().map((l) => l.text);
    expect(firstTexts[0]).toMatch(/^220 /);
    expect(firstTexts).toContain('EHLO probe.mailverdict.test');
    expect(firstTexts.join('\n')).not.toMatch(/NOOP|RSET|QUIT/);
    expect(second.seal().map((l) => `${l.dir} ${l.text.slice(0, 4)}`)).toEqual(['out NOOP', 'in 250 ']);
  });

  it('ignores lines once sealed', () => {
    const recorder = new TranscriptRecorder(() => 0);
    recorder.record('out', 'EHLO a');
    recorder.seal();
    recorder.record('out', 'MAIL FROM:<>');
    expect(recorder.seal()).toEqual([{ dir: 'out', text: 'EHLO a', at_ms: 0 }]);
  });
});

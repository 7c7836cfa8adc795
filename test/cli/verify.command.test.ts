import { once } from 'node:events';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerificationResult } from '../../src/engine/types.js';
import { startDnsServer, TRUST_ANCHOR, withTrustAnchor } from '../kit/dns-server.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { runCli, type CliResult } from '../kit/cli.js';

let dns: FakeDnsServer;
let smtp: SMTPServer;
let smtpPort: number;

/** Runs the CLI from source in a child process, with no MAILVERDICT_* settings from this shell. */
function cli(...args: string[]): Promise<CliResult> {
  return runCli(args);
}

function engineFlags(): string[] {
  return [
    '--dns-server',
    dns.address,
    // The resolver is judged by the kit's anchor, which the test server answers.
    '--dns-trust-name',
    TRUST_ANCHOR,
    '--dns-trust-absent-zone',
    'test',
    '--smtp-port',
    String(smtpPort),
    '--timeout-ms',
    '2000',
    '--allow-internal-targets',
  ];
}

beforeAll(async () => {
  dns = withTrustAnchor(
    await startDnsServer({
      'shop.test': { mx: [{ exchange: 'mx.shop.test', priority: 10 }] },
      'mx.shop.test': { a: ['127.0.0.1'] },
    }),
  );
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith('alice@')) return callback();
      const err = new Error('5.1.1 user unknown') as Error & { responseCode: number };
      err.responseCode = 550;
      return callback(err);
    },
  });
  // The CLI exits right after its verdicts and may reset a connection the server still holds.
  smtp.on('error', () => {});
  smtp.listen(0, '127.0.0.1');
  await once(smtp.server, 'listening');
  const address = smtp.server.address();
  smtpPort = typeof address === 'object' && address !== null ? address.port : 0;
});

afterAll(async () => {
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await dns.close();
});

// Each test starts its own CLI process; they share only the servers, so they may overlap.
describe.concurrent('mailverdict verify', () => {
  it('prints one JSON result per line with --json, in the order given, and exits 0', async () => {
    const run = await cli(
      'verify',
      '--json',
      ...engineFlags(),
      'alice@shop.test',
      'bob@shop.test',
      'not-an-address',
    );

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    const [alice, bob, bad] = lines.map((line) => JSON.parse(line) as VerificationResult);
    expect(alice).toMatchObject({
      email: 'alice@shop.test',
      status: 'deliverable',
      valid: true,
      reason: null,
      mx: true,
    });
    expect(alice!.checks.smtp).toMatchObject({ host: 'mx.shop.test', code: 250 });
    expect(bob).toMatchObject({ email: 'bob@shop.test', status: 'undeliverable', reason: 'smtp_rejected' });
    expect(bob!.checks.smtp.code).toBe(550);
    expect(bad).toMatchObject({ status: 'undeliverable', reason: 'invalid_email_format', valid: false });
  });

  it('takes --dns-server repeated and as comma lists, falling over to the next server', async () => {
    // Nothing listens on ports 1 and 2: the resolver is refused there and asks the next server.
    const run = await cli(
      'verify',
      '--json',
      '--dns-server',
      '127.0.0.1:1',
      ...engineFlags().map((flag) => (flag === dns.address ? `127.0.0.1:2,${dns.address}` : flag)),
      'alice@shop.test',
    );

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'deliverable', mx: true });
  });

  it('prints an aligned table by default', async () => {
    const run = await cli('verify', ...engineFlags(), 'alice@shop.test', 'bob@shop.test');

    expect(run.code).toBe(0);
    const [header, ...rows] = run.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ADDRESS\s+STATUS\s+SCORE\s+REASON\s+DID YOU MEAN\s+MX HOST\s+SMTP$/);
    expect(rows[0]).toMatch(/^alice@shop\.test\s+deliverable\s+\d+\s+-\s+-\s+mx\.shop\.test\s+250/);
    expect(rows[1]).toMatch(
      /^bob@shop\.test\s+undeliverable\s+\d+\s+smtp_rejected\s+-\s+mx\.shop\.test\s+550/,
    );
    // Aligned: every column starts at the same offset on every line.
    const statusColumn = header!.indexOf('STATUS');
    for (const row of rows) expect(row.slice(statusColumn)).toMatch(/^(deliverable|undeliverable)/);
  });

  it('adds the SMTP conversation to each JSON result with --transcript, and only then', async () => {
    const [asked, plain] = await Promise.all([
      cli('verify', '--json', '--transcript', ...engineFlags(), 'alice@shop.test'),
      cli('verify', '--json', ...engineFlags(), 'alice@shop.test'),
    ]);

    expect(asked.code).toBe(0);
    const result = JSON.parse(asked.stdout) as VerificationResult;
    const texts = result.transcript!.map((l) => `${l.dir} ${l.text}`);
    expect(texts[0]).toMatch(/^out \[connect mx\.shop\.test \(127\.0\.0\.1\) port \d+\]$/);
    expect(texts[1]).toMatch(/^in 220 /);
    expect(texts).toContain('out RCPT TO:<alice@shop.test>');
    // QUIT, which ends the session after the answer, is no part of the transcript.
    expect(texts.at(-1)).toMatch(/^in 550 /);
    expect(JSON.parse(plain.stdout)).not.toHaveProperty('transcript');
  });

  it('prints the conversation under the table with --transcript, > sent and < received', async () => {
    const run = await cli('verify', '--transcript', ...engineFlags(), 'bob@shop.test', 'no at sign');

    expect(run.code).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(/^ADDRESS\s+STATUS/);
    expect(out).toContain('SMTP conversation for bob@shop.test:');
    expect(out).toMatch(/^ {2}\+ *\d+ms > RCPT TO:<bob@shop\.test>$/m);
    expect(out).toMatch(/^ {2}\+ *\d+ms < 550 5\.1\.1 user unknown$/m);
    expect(out).toContain('SMTP conversation for no at sign:\n  (no mail server was asked)');
  });

  it('names --transcript in its help', async () => {
    const run = await cli('verify', '--help');
    expect(run.stdout).toMatch(/--transcript\s+add the SMTP conversation/);
  });

  it('reports a malformed address as undeliverable invalid_email_format and still exits 0', async () => {
    const run = await cli('verify', ...engineFlags(), 'no at sign');

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/no at sign\s+undeliverable\s+\d+\s+invalid_email_format/);
    expect(dns.queryCount('no at sign')).toBe(0);
  });

  it.each(['50'])('rejects --timeout-ms %s with exit code 2 and a message', async (value) => {
    const run = await cli('verify', '--timeout-ms', value, 'alice@shop.test');

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--timeout-ms');
    expect(run.stderr).toContain('100 to 5000');
    expect(run.stdout).toBe('');
  });

  it('rejects a DNS server given as a host name with exit code 2', async () => {
    const run = await cli('verify', '--dns-server', 'dns.example.test', 'alice@shop.test');

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--dns-server');
  });

  it('exits 2 when no address is given', async () => {
    const run = await cli('verify');

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('address');
  });
});

/**
 * `mailverdict batch FILE` as a real child process, against loopback fake MTAs (127.0.4.x) and
 * the in-process DNS server running in this test process.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeMta } from '../kit/pipelining-mta.js';
import { startFakeMta } from '../kit/pipelining-mta.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer, TRUST_ANCHOR, withTrustAnchor } from '../kit/dns-server.js';
import { runCli, spawnCli } from '../kit/cli.js';

let mta: FakeMta;
let slowMta: FakeMta;
let dns: FakeDnsServer;
let dir: string;

beforeAll(async () => {
  const rcpt = (address: string): string =>
    address.startsWith('user') || address.startsWith('"') ? '250 2.1.5 OK' : '550 5.1.1 User unknown';
  mta = await startFakeMta({ hosts: ['127.0.4.1'], rcpt });
  // Slow enough that a run of 400 addresses is still going when the test interrupts it.
  slowMta = await startFakeMta({ hosts: ['127.0.4.2'], rcpt, latencyMs: 60 });
  dns = withTrustAnchor(await startDnsServer());
  dns.setDomain('mx0.test', { a: ['127.0.4.1'] });
  dns.setDomain('mx1.test', { a: ['127.0.4.2'] });
  dns.setDomain('one.test', { mx: [{ exchange: 'mx0.test', priority: 10 }] });
  dns.setDomain('slow.test', { mx: [{ exchange: 'mx1.test', priority: 10 }] });
  dir = await mkdtemp(join(tmpdir(), 'mailverdict-batch-cli-'));
});

afterAll(async () => {
  await mta.close();
  await slowMta.close();
  await dns.close();
  await rm(dir, { recursive: true, force: true });
});

function engineFlags(port: number): string[] {
  return [
    '--dns-server',
    dns.address,
    // The resolver is judged by the kit's anchor, which the test server answers.
    '--dns-trust-name',
    TRUST_ANCHOR,
    '--dns-trust-absent-zone',
    'test',
    '--smtp-port',
    String(port),
    '--timeout-ms',
    '2000',
    '--allow-internal-targets',
  ];
}

describe('mailverdict batch', () => {
  it('verifies a list file and writes the API rows as RFC 4180 CSV to --out, in input order', async () => {
    const input = join(dir, 'list.txt');
    const out = join(dir, 'out.csv');
    await writeFile(
      input,
      [
        'user1@one.test',
        'nobody@one.test',
        '"a,b"@one.test',
        'not an address',
        '',
        'user1@one.test',
        'x@nowhere.test',
      ]
        .map((l) => `${l}\r\n`)
        .join(''),
    );
    const result = await runCli(['batch', input, '--out', out, ...engineFlags(mta.port)]);
    expect(result.code, result.stderr).toBe(0);
    const csv = await readFile(out, 'utf8');
    expect(csv.split('\r\n')[0]).toBe('email,status,score,reason');
    expect(csv).toContain('"""a,b""@one.test",deliverable,95,\r\n');
    const rows = parseCsv(csv, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.email, r.status, r.reason])).toEqual([
      ['user1@one.test', 'deliverable', ''],
      ['nobody@one.test', 'undeliverable', 'smtp_rejected'],
      ['"a,b"@one.test', 'deliverable', ''],
      ['not an address', 'undeliverable', 'invalid_email_format'],
      ['user1@one.test', 'deliverable', ''],
      ['x@nowhere.test', 'undeliverable', 'domain_not_found'],
    ]);
    // The progress bar goes to stderr: done/total, rate and ETA.
    expect(result.stderr).toMatch(/6\/6 addresses \| \d+\/s \| ETA/);
    expect(result.stdout).toBe('');
  });

  it('reads the email column of a CSV file and writes JSON to stdout', async () => {
    const input = join(dir, 'contacts.csv');
    await writeFile(
      input,
      'name,email,notes\nJo,user5@one.test,first\n"Smith, Al","nobody@one.test","x, y"\n',
    );
    const result = await runCli([
      'batch',
      input,
      '--format',
      'json',
      '--no-progress',
      ...engineFlags(mta.port),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      results: [
        { index: 0, email: 'user5@one.test', status: 'deliverable', score: 95, reason: null },
        { index: 1, email: 'nobody@one.test', status: 'undeliverable', score: 5, reason: 'smtp_rejected' },
      ],
    });
    expect(result.stderr).toBe('');
  });

  it('stops cleanly on SIGINT and keeps the rows verified so far', async () => {
    const input = join(dir, 'long.txt');
    const out = join(dir, 'long.csv');
    const emails = Array.from({ length: 400 }, (_, i) => `user${i}@slow.test`);
    await writeFile(input, emails.join('\n'));
    const child = spawnCli([
      'batch',
      input,
      '--out',
      out,
      '--per-host-concurrency',
      '1',
      ...engineFlags(slowMta.port),
    ]);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));

    // Interrupt once some rows are out (the file grows as rows settle in input order).
    for (let i = 0; i < 200; i++) {
      const text = await readFile(out, 'utf8').catch(() => '');
      if (text.split('\n').length > 20) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGINT');
    const code = await exited;

    expect(code, stderr).toBe(130);
    expect(stderr).toMatch(/interrupted; \d+ of 400 addresses verified/);
    const rows = parseCsv(await readFile(out, 'utf8'), { columns: true }) as Record<string, string>[];
    expect(rows.length).toBeGreaterThanOrEqual(20);
    expect(rows.length).toBeLessThan(400);
    // Verified rows only, complete, in input order.
    const positions = rows.map((r) => emails.indexOf(r.email!));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    for (const row of rows) expect(row).toMatchObject({ status: 'deliverable', score: '95', reason: '' });
  });

  it('explains the formats and the Ctrl-C behaviour in --help', async () => {
    const result = await runCli(['batch', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('email,status,score,reason');
    expect(result.stdout).toContain('SIGINT');
  });
});

/**
 * `mailverdict egresses` through the real CLI without Redis: it asks the blocklists itself (the
 * in-process DNS server's `bl.test` zone) and prints each egress's health. With Redis (the state
 * every process shares): test/redis/egress-guard.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsblQueryName } from '../../src/engine/dns/dnsbl.js';
import { startDnsServer, type FakeDnsServer } from '../kit/dns-server.js';
import { cleanEnv, runCli } from '../kit/cli.js';

let dns: FakeDnsServer;

beforeAll(async () => {
  dns = await startDnsServer({
    [dnsblQueryName('127.0.0.31', 'bl.test')]: { a: ['127.0.0.2'], txt: ['listed: see https://bl.test/'] },
    [dnsblQueryName('127.0.0.32', 'bl.test')]: { a: ['127.255.255.254'] },
  });
});
afterAll(async () => {
  await dns.close();
});

const args = (sources: string, ...more: string[]): string[] => [
  'egresses',
  '--dns-server',
  dns.address,
  '--dnsbl-zone',
  'bl.test',
  '--allow-internal-targets',
  '--source-address',
  sources,
  '--proxy',
  'socks5://127.0.0.1:1080',
  ...more,
];

describe('mailverdict egresses', () => {
  it('prints one JSON line with each egress health, and exits 1 when one rests', async () => {
    const { code, stdout } = await runCli(args('127.0.0.30,127.0.0.31,127.0.0.32', '--json'), cleanEnv());
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as {
      shared: boolean;
      egresses: {
        egress: string;
        state: string;
        reason: string | null;
        unchecked: string | null;
        last_check: { zones: { result: string }[] } | null;
      }[];
    };
    expect(report.shared).toBe(false);
    expect(report.egresses.map((e) => [e.egress, e.state])).toEqual([
      ['127.0.0.30', 'ok'],
      ['127.0.0.31', 'listed'],
      ['127.0.0.32', 'ok'],
      ['socks5://127.0.0.1:1080', 'ok'],
    ]);
    expect(report.egresses[1]!.reason).toBe('listed on bl.test (127.0.0.2: listed: see https://bl.test/)');
    expect(report.egresses[2]!.last_check!.zones[0]!.result).toBe('cannot_tell');
    expect(report.egresses[3]!.unchecked).toBe(
      "the proxy's exit address is unknown here: run-time blocks only",
    );
  });

  it('prints a table, and exits 0 when every egress is in service', async () => {
    const { code, stdout, stderr } = await runCli(args('127.0.0.30'), cleanEnv());
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^EGRESS\s+STATE\s+SINCE\s+LAST CHECK\s+REASON\n/);
    expect(stdout).toMatch(/\n127\.0\.0\.30\s+ok\s+/);
    expect(stdout).toContain("2 in service, 0 resting (this command's own check: no --redis-url)");
    expect(code).toBe(0);
  });
});

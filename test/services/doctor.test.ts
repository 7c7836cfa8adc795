/**
 * The parts of `mailverdict doctor` that need no network: the offline checks `serve` and `worker`
 * warn about, and how blocklist answers and EHLO replies are read. The checks that ask DNS and
 * SMTP servers are specified through the CLI in test/cli/doctor.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { classifyDnsblCodes, dnsblQueryName } from '../../src/engine/dns/dnsbl.js';
import { reverseName } from '../../src/engine/dns/lookups.js';
import { echoedAddress } from '../../src/engine/smtp/ehlo-probe.js';
import type { SmtpReply } from '../../src/engine/smtp/reply.js';
import type { SmtpOptions } from '../../src/engine/types.js';
import { defaultHeloName } from '../../src/config.js';
import { isFullyQualified } from '../../src/engine/net/host-name.js';
import { offlineChecks, startupWarnings } from '../../src/services/prober/doctor.service.js';

const smtp = (overrides: Partial<SmtpOptions>): SmtpOptions => ({
  port: 25,
  heloName: 'localhost',
  mailFrom: 'verify@localhost',
  proxies: [],
  sourceAddresses: [],
  maxMxHosts: 3,
  ...overrides,
});

const reply = (line: string, code = 250): SmtpReply => ({
  code,
  enhancedCode: null,
  lines: [line],
  message: line,
});

describe('HELO names', () => {
  it.each(['mx1.example.com', 'probe.example.co.uk', 'MX.Example.NET.', 'a-b.example'])(
    '%s is fully qualified',
    (name) => {
      expect(isFullyQualified(name)).toBe(true);
    },
  );

  it.each([
    'localhost',
    'prober',
    'box.localdomain',
    'printer.local',
    '192.0.2.1',
    '-bad.example',
    'a..example',
    '',
  ])('%s is not', (name) => {
    expect(isFullyQualified(name)).toBe(false);
  });
});

describe('the HELO name without --helo', () => {
  it("is the host's name when it is fully qualified", () => {
    expect(defaultHeloName('Prober1.Example.NET')).toBe('prober1.example.net');
  });

  it('is localhost otherwise, which the start-up warnings name', () => {
    expect(defaultHeloName('vm')).toBe('localhost');
    expect(defaultHeloName('box.localdomain')).toBe('localhost');
  });
});

describe('the offline checks', () => {
  it('pass a prober whose HELO name and sender domain are fully qualified', () => {
    const checks = offlineChecks(smtp({ heloName: 'mx1.example.com', mailFrom: 'verify@example.com' }));
    expect(checks).toEqual([
      {
        id: 'helo_fqdn',
        status: 'pass',
        egress: 'default',
        message: "HELO name 'mx1.example.com' is fully qualified",
      },
    ]);
    expect(startupWarnings(smtp({ heloName: 'mx1.example.com', mailFrom: 'verify@example.com' }))).toEqual(
      [],
    );
  });

  it('check the HELO name of each egress, and name the source address to fix', () => {
    const checks = offlineChecks(
      smtp({
        heloName: 'mx.example.com',
        mailFrom: 'v@example.com',
        sourceAddresses: ['192.0.2.10=probe', '192.0.2.11'],
      }),
    );
    expect(checks.map((c) => [c.egress, c.status])).toEqual([
      ['192.0.2.10', 'fail'],
      ['192.0.2.11', 'pass'],
    ]);
    expect(checks[0]!.fix).toBe(
      'give the source address its reverse-DNS name: --source-address 192.0.2.10=<name>, or set --helo',
    );
  });

  it('give one start-up warning per problem, however many egresses share it', () => {
    const warnings = startupWarnings(
      smtp({ proxies: ['socks5://127.0.0.1:1080', 'socks5://127.0.0.1:1081'], mailFrom: 'verify@prober' }),
    );
    expect(warnings).toEqual([
      "MAIL FROM domain 'prober' (of verify@prober) is not fully qualified: set --mail-from to an address at a domain you own, with MX or A records and an SPF record; see `mailverdict doctor`",
      "HELO name 'localhost' is not fully qualified: set --helo to the egress's reverse-DNS name; see `mailverdict doctor`",
    ]);
  });
});

describe('blocklist answers', () => {
  it('ask the reversed address under the zone, nibbles for IPv6', () => {
    expect(dnsblQueryName('192.0.2.99', 'zen.spamhaus.org')).toBe('99.2.0.192.zen.spamhaus.org');
    expect(dnsblQueryName('2001:db8::1', 'zen.spamhaus.org.')).toBe(
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.zen.spamhaus.org',
    );
    expect(reverseName('::ffff:192.0.2.99')).toBe('99.2.0.192.in-addr.arpa');
  });

  it('read 127.0.0.x as listed', () => {
    expect(classifyDnsblCodes(['127.0.0.2', '127.0.0.4'])).toEqual({
      kind: 'listed',
      codes: ['127.0.0.2', '127.0.0.4'],
      reason: null,
    });
  });

  it.each([
    ['127.255.255.252', 'the zone name is mistyped (Spamhaus)'],
    ['127.255.255.254', 'queries through a public or open resolver are refused (Spamhaus)'],
    ['127.255.255.255', 'the resolver sent too many queries (Spamhaus)'],
    ['127.255.255.250', 'the list refused the query'],
    ['198.51.100.7', 'the answer is not a blocklist code (a resolver that rewrites NXDOMAIN?)'],
  ])('read %s as a refused query, never as listed', (code, meaning) => {
    expect(classifyDnsblCodes([code])).toEqual({ kind: 'refused', codes: [code], meaning });
  });
});

describe('the client address an EHLO reply echoes', () => {
  it.each([
    ['mx.google.com at your service, [203.0.113.7]', '203.0.113.7'],
    ['EX1.outlook.com Hello [2001:db8::7]', '2001:db8::7'],
    ['mail.example Hello probe.example [IPv6:2001:db8::8]', '2001:db8::8'],
    ['smtp.example Nice to meet you, [127.0.0.1]', '127.0.0.1'],
    ['mx.example Hello probe (198.51.100.4)', '198.51.100.4'],
  ])('%s', (line, address) => {
    expect(echoedAddress(reply(line))).toBe(address);
  });

  it('is none when the server does not echo it (Postfix)', () => {
    expect(echoedAddress(reply('mx.example.com'))).toBeNull();
    expect(echoedAddress(reply('mx.example.com [not an address]'))).toBeNull();
  });
});

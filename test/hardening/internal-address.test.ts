/**
 * Issue 7, defect 4: the SSRF classifier judges the IPv4 address that IPv6 transition forms carry,
 * refuses zone ids instead of throwing, and is the one classifier of webhook and SMTP targets.
 */
import { describe, expect, it } from 'vitest';
import { isInternalAddress, isLoopbackAddress } from '../../src/engine/net/internal-address.js';
import { checkWebhookTarget } from '../../src/services/webhooks/ssrf.js';

const INTERNAL: [string, string][] = [
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['192.168.1.1', 'private'],
  ['127.0.0.1', 'loopback'],
  ['169.254.169.254', 'metadata service (link-local)'],
  ['100.64.0.1', 'CGNAT'],
  ['0.0.0.0', 'unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['224.0.0.1', 'multicast'],
  ['198.18.0.1', 'benchmarking'],
  ['192.0.2.1', 'documentation'],
  ['::1', 'IPv6 loopback'],
  ['::', 'IPv6 unspecified'],
  ['fe80::1', 'link-local'],
  ['fc00::1', 'unique local'],
  ['fd12:3456::1', 'unique local'],
  ['ff02::1', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:0:10.0.0.1', 'SIIT private'],
  ['::10.0.0.1', 'IPv4-compatible private'],
  ['64:ff9b::10.0.0.1', 'NAT64 of a private address'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 of the metadata service'],
  ['64:ff9b:1::8.8.8.8', 'local-use NAT64 (RFC 8215), whatever it carries'],
  ['2002:7f00:1::1', '6to4 of loopback'],
  ['2002:c0a8:101::1', '6to4 of 192.168.1.1'],
  ['2002:a9fe:a9fe::', '6to4 of the metadata service'],
  ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'Teredo whose client is 10.0.0.1 (inverted)'],
  ['2001:0:a00:1::1', 'Teredo whose server is 10.0.0.1'],
  ['fe80::1%eth0', 'zone id'],
  ['fe80::1%25eth0', 'zone id, URL-encoded'],
  ['not-an-ip', 'not an address'],
  ['', 'empty'],
];

const PUBLIC: [string, string][] = [
  ['93.184.215.14', 'public IPv4'],
  ['8.8.8.8', 'public IPv4'],
  ['2606:4700:4700::1111', 'public IPv6'],
  ['::ffff:93.184.215.14', 'IPv4-mapped public'],
  ['64:ff9b::808:808', 'NAT64 of 8.8.8.8'],
  ['2002:808:808::1', '6to4 of 8.8.8.8'],
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo of public server and client 8.8.8.8'],
];

describe('isInternalAddress', () => {
  it.each(INTERNAL)('refuses %s (%s)', (address) => {
    expect(() => isInternalAddress(address)).not.toThrow();
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each(PUBLIC)('accepts %s (%s)', (address) => {
    expect(isInternalAddress(address)).toBe(false);
  });
});

describe('isLoopbackAddress', () => {
  it.each(['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1', '2002:7f00:1::1'])('knows %s', (a) => {
    expect(isLoopbackAddress(a)).toBe(true);
  });
  it.each(['10.0.0.1', 'fe80::1%lo', '8.8.8.8', 'x'])('is false for %s', (a) => {
    expect(isLoopbackAddress(a)).toBe(false);
  });
});

describe('the webhook guard', () => {
  it.each(['2002:c0a8:101::1', '64:ff9b:1::a00:1', '2001:0:4136:e378:8000:63bf:f5ff:fffe', 'fe80::1%eth0'])(
    'refuses a name resolving to %s',
    async (address) => {
      const url = new URL('https://hooks.example.net/h');
      await expect(
        checkWebhookTarget(url, { allowInsecure: false, resolve: async () => [{ address, family: 6 }] }),
      ).rejects.toThrow(/internal address/);
    },
  );
});

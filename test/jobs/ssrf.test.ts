import { describe, expect, it } from 'vitest';
import {
  checkWebhookTarget,
  isInternalAddress,
  parseWebhookUrl,
  WebhookTargetError,
  type HostResolver,
} from '../../src/services/webhooks/ssrf.js';

describe('isInternalAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '100.127.255.254',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '192.0.2.1',
    '198.18.0.1',
    '::',
    '::1',
    'fe80::1',
    'febf::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:0:192.168.0.1',
    '::127.0.0.1',
    '64:ff9b::a00:1',
    '2001:db8::1',
    'not-an-ip',
  ])('refuses %s', (address) => {
    expect(isInternalAddress(address)).toBe(true);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    'accepts the public address %s',
    (address) => {
      expect(isInternalAddress(address)).toBe(false);
    },
  );
});

const resolver =
  (table: Record<string, string[]>): HostResolver =>
  async (host) => {
    const list = table[host];
    if (!list) throw new Error('ENOTFOUND');
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('checkWebhookTarget', () => {
  const resolve = resolver({
    'hooks.example.net': ['93.184.215.14'],
    'mixed.example.net': ['93.184.215.14', '10.0.0.5'],
    'inside.example.net': ['192.168.0.10'],
    'local.example.net': ['127.0.0.1'],
  });
  const check = (url: string, allowInsecure = false, allowUnresolved = false) =>
    checkWebhookTarget(parseWebhookUrl(url, allowInsecure), { allowInsecure, resolve, allowUnresolved });

  it('accepts a name resolving to public addresses and returns them to connect to', async () => {
    const target = await check('https://hooks.example.net/x');
    expect(target.addresses).toEqual([{ address: '93.184.215.14', family: 4 }]);
  });

  it('refuses a name when any of its addresses is internal', async () => {
    await expect(check('https://mixed.example.net/x')).rejects.toThrow(/internal address \(10\.0\.0\.5\)/);
    await expect(check('https://inside.example.net/x')).rejects.toThrow(WebhookTargetError);
  });

  it('refuses http:// and credentials unless insecure webhooks are allowed', () => {
    expect(() => parseWebhookUrl('http://hooks.example.net/x', false)).toThrow(/https/);
    expect(() => parseWebhookUrl('https://u:p@hooks.example.net/x', false)).toThrow(/credentials/);
    expect(parseWebhookUrl('http://hooks.example.net/x', true).protocol).toBe('http:');
  });

  it('allows loopback, and only loopback, with allowInsecure', async () => {
    await expect(check('http://local.example.net/x', true)).resolves.toBeDefined();
    await expect(check('http://127.0.0.1:9/x', true)).resolves.toBeDefined();
    await expect(check('http://inside.example.net/x', true)).rejects.toThrow(/internal/);
    await expect(check('https://local.example.net/x')).rejects.toThrow(/internal/);
  });

  it('accepts an unresolvable name only when told to (at submission), not at delivery', async () => {
    await expect(check('https://nowhere.example.net/x', false, true)).resolves.toMatchObject({
      addresses: [],
    });
    await expect(check('https://nowhere.example.net/x')).rejects.toThrow(/does not resolve/);
  });
});

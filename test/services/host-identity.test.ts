/**
 * The default HELO names (without `--helo`): each source address's forward-confirmed reverse-DNS
 * name, else the host's fully qualified name, looked up at start-up against the in-process DNS
 * server, within a short budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { reverseName } from '../../src/engine/dns/lookups.js';
import { discoverHostIdentity } from '../../src/services/prober/host-identity.service.js';
import { startDnsServer, type FakeDnsServer } from '../kit/dns-server.js';

let dns: FakeDnsServer;

beforeAll(async () => {
  dns = await startDnsServer({
    // .40: forward-confirmed. .41: a PTR name that does not resolve back. ::1: confirmed over IPv6.
    [reverseName('127.0.0.40')]: { ptr: ['out40.prober.test'] },
    'out40.prober.test': { a: ['127.0.0.40'] },
    [reverseName('127.0.0.41')]: { ptr: ['out41.prober.test'] },
    'out41.prober.test': { a: ['127.0.0.99'] },
    [reverseName('::1')]: { ptr: ['out6.prober.test'] },
    'out6.prober.test': { aaaa: ['::1'] },
  });
});
afterAll(async () => {
  await dns.close();
});

const flags = (more: Record<string, string> = {}): Record<string, string> => ({
  dnsServer: dns.address,
  allowInternalTargets: 'true',
  sourceAddress: '127.0.0.40,127.0.0.41,::1,127.0.0.42=named.prober.test',
  ...more,
});

describe('the default HELO names', () => {
  it('are each source address’s forward-confirmed reverse-DNS name, and the host’s FQDN for the rest', async () => {
    const first = loadConfig(flags(), {});
    const identity = await discoverHostIdentity(first, { hostName: 'Prober1.Example.NET' });
    expect(identity).toEqual({
      fqdn: 'prober1.example.net',
      reverseNames: { '127.0.0.40': 'out40.prober.test', '::1': 'out6.prober.test' },
    });
    const config = loadConfig(flags({ proxy: 'socks5://127.0.0.1:1080' }), {}, identity);
    expect(config.engine.smtp.sourceAddresses).toEqual([
      '127.0.0.40=out40.prober.test',
      '127.0.0.41',
      '::1=out6.prober.test',
      '127.0.0.42=named.prober.test',
    ]);
    expect(config.engine.smtp.heloName).toBe('prober1.example.net');
    expect(config.engine.smtp.mailFrom).toBe('verify@prober1.example.net');
  });

  it('are not looked at when --helo is set', async () => {
    const identity = { fqdn: 'prober1.example.net', reverseNames: { '127.0.0.40': 'out40.prober.test' } };
    const config = loadConfig(flags({ helo: 'mx.chosen.test' }), {}, identity);
    expect(config.engine.smtp.heloName).toBe('mx.chosen.test');
    expect(config.engine.smtp.sourceAddresses![0]).toBe('127.0.0.40');
    const fromEnv = loadConfig(flags(), { MAILVERDICT_HELO_NAME: 'mx.env.test' }, identity);
    expect(fromEnv.engine.smtp.heloName).toBe('mx.env.test');
  });

  it('fall back to the old default when the resolver does not answer (offline)', async () => {
    dns.setSilent(reverseName('127.0.0.40'));
    try {
      const first = loadConfig(flags({ dnsTimeout: '200ms' }), {});
      const identity = await discoverHostIdentity(first, { hostName: 'vm', timeoutMs: 200 });
      expect(identity.reverseNames['127.0.0.40']).toBeUndefined();
      const config = loadConfig(flags(), {}, identity);
      expect(config.engine.smtp.sourceAddresses![0]).toBe('127.0.0.40');
      expect(config.engine.smtp.heloName).toBe(loadConfig(flags(), {}).engine.smtp.heloName);
    } finally {
      dns.setDomain(reverseName('127.0.0.40'), { ptr: ['out40.prober.test'] });
    }
  });
});

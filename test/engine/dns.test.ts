import { promises as dns } from 'node:dns';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MailHostResolver } from '../../src/engine/dns/resolver.js';
import type { ResolverDeps } from '../../src/engine/dns/resolver.js';
import { classifyDnsError } from '../../src/engine/dns/dns-errors.js';
import { invalidDnsServers } from '../../src/engine/dns/servers.js';
import type { DnsOptions } from '../../src/engine/types.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { FakeDnsServer } from '../kit/dns-server.js';

const POSITIVE_TTL = 60_000;
const NEGATIVE_TTL = 30_000;

let server: FakeDnsServer;
const resolvers: MailHostResolver[] = [];
let now = 1_000_000;

function resolver(deps: ResolverDeps = {}, options: Partial<DnsOptions> = {}): MailHostResolver {
  const r = new MailHostResolver(
    {
      servers: [server.address],
      timeoutMs: 200,
      tries: 1,
      positiveTtlMs: POSITIVE_TTL,
      negativeTtlMs: NEGATIVE_TTL,
      ...options,
    },
    { clock: () => now, ...deps },
  );
  resolvers.push(r);
  return r;
}

let domainCounter = 0;
/** A fresh name per test, so no test sees another's zone or cache. */
function freshDomain(): string {
  domainCounter += 1;
  return `d${domainCounter}.example.test`;
}

beforeAll(async () => {
  server = await startDnsServer();
});

afterEach(() => {
  for (const r of resolvers.splice(0)) r.close();
  now = 1_000_000;
});

afterAll(async () => {
  await server.close();
});

describe('MailHostResolver', () => {
  it('hands a host out with its A addresses 50 ms after them when AAAA is late, and adds IPv6 when it comes', async () => {
    const domain = freshDomain();
    server.setDomain(domain, { mx: [{ exchange: `mx.${domain}`, priority: 10 }] });
    server.setDomain(`mx.${domain}`, { a: ['192.0.2.1'], aaaa: ['2001:db8::1'] });
    // Late by far more than the Resolution Delay: a host handed out with its A addresses only was
    // handed out before the AAAA answer came (no clock is read; a loaded machine cannot fail it).
    server.setTypeDelay('AAAA', 3_000, `mx.${domain}`);
    const r = resolver({}, { timeoutMs: 6_000 });
    const outcome = await r.resolve(domain);
    if (outcome.kind !== 'ok') throw new Error(outcome.kind);
    const [host] = outcome.hosts;
    expect(host!.addresses).toEqual(['192.0.2.1']);
    expect(await host!.lateAddresses).toEqual(['2001:db8::1']);
    // The cached answer has both families from then on.
    const again = await r.resolve(domain);
    if (again.kind !== 'ok') throw new Error(again.kind);
    expect(again.hosts[0]!.addresses).toEqual(['192.0.2.1', '2001:db8::1']);
    expect(again.hosts[0]!.lateAddresses).toBeUndefined();
  });

  it('waits up to the Resolution Delay for AAAA after A, and hands out both when it comes', async () => {
    const domain = freshDomain();
    server.setDomain(domain, { mx: [{ exchange: `mx.${domain}`, priority: 10 }] });
    server.setDomain(`mx.${domain}`, { a: ['192.0.2.1'], aaaa: ['2001:db8::1'] });
    server.setTypeDelay('AAAA', 20, `mx.${domain}`);
    const outcome = await resolver().resolve(domain);
    if (outcome.kind !== 'ok') throw new Error(outcome.kind);
    expect(outcome.hosts[0]!.addresses).toEqual(['192.0.2.1', '2001:db8::1']);
    expect(outcome.hosts[0]!.lateAddresses).toBeUndefined();
  });

  it('returns MX hosts in preference order with their addresses', async () => {
    const d = freshDomain();
    server.setDomain(d, {
      mx: [
        { exchange: `c.${d}`, priority: 30 },
        { exchange: `a.${d}`, priority: 10 },
        { exchange: `b.${d}`, priority: 20 },
      ],
    });
    server.setDomain(`a.${d}`, { a: ['127.0.0.2'] });
    server.setDomain(`b.${d}`, { a: ['127.0.0.3'], aaaa: ['::1'] });
    server.setDomain(`c.${d}`, { aaaa: ['::2'] });

    const outcome = await resolver().resolve(d);

    expect(outcome).toEqual({
      kind: 'ok',
      implicit: false,
      records: [
        { exchange: `a.${d}`, priority: 10 },
        { exchange: `b.${d}`, priority: 20 },
        { exchange: `c.${d}`, priority: 30 },
      ],
      hosts: [
        { exchange: `a.${d}`, priority: 10, addresses: ['127.0.0.2'] },
        { exchange: `b.${d}`, priority: 20, addresses: ['127.0.0.3', '::1'] },
        { exchange: `c.${d}`, priority: 30, addresses: ['::2'] },
      ],
    });
  });

  it('shuffles hosts of equal preference with the injected randomness', async () => {
    const d = freshDomain();
    server.setDomain(d, {
      mx: [
        { exchange: `x.${d}`, priority: 5 },
        { exchange: `y.${d}`, priority: 10 },
        { exchange: `z.${d}`, priority: 10 },
      ],
    });
    for (const h of ['x', 'y', 'z']) server.setDomain(`${h}.${d}`, { a: ['127.0.0.2'] });

    const orderWith = async (value: number): Promise<string[]> => {
      const outcome = await resolver({ random: () => value }).resolve(d);
      if (outcome.kind !== 'ok') throw new Error(`unexpected ${outcome.kind}`);
      return outcome.hosts.map((h) => h.exchange);
    };

    const low = await orderWith(0);
    const high = await orderWith(0.99);
    expect(low).toEqual([`x.${d}`, `z.${d}`, `y.${d}`]);
    expect(high).toEqual([`x.${d}`, `y.${d}`, `z.${d}`]);
  });

  it('reshuffles equal preferences on every call, also when the answer comes from the cache', async () => {
    const d = freshDomain();
    server.setDomain(d, {
      mx: [
        { exchange: `p.${d}`, priority: 10 },
        { exchange: `q.${d}`, priority: 10 },
      ],
    });
    server.setDomain(`p.${d}`, { a: ['127.0.0.2'] });
    server.setDomain(`q.${d}`, { a: ['127.0.0.3'] });
    let value = 0;
    const r = resolver({ random: () => value });

    const first = await r.resolve(d);
    value = 0.99;
    const second = await r.resolve(d);

    expect(first.kind === 'ok' && first.hosts.map((h) => h.exchange)).toEqual([`q.${d}`, `p.${d}`]);
    expect(second.kind === 'ok' && second.hosts.map((h) => h.exchange)).toEqual([`p.${d}`, `q.${d}`]);
    expect(server.queryCount(d, 'MX')).toBe(1);
  });

  it('uses the domain itself as mail host when it has no MX but an A record (implicit MX)', async () => {
    const d = freshDomain();
    server.setDomain(d, { a: ['127.0.0.5'] });

    expect(await resolver().resolve(d)).toEqual({
      kind: 'ok',
      implicit: true,
      records: [],
      hosts: [{ exchange: d, priority: 0, addresses: ['127.0.0.5'] }],
    });
  });

  it('uses the domain itself as mail host when it has only an AAAA record', async () => {
    const d = freshDomain();
    server.setDomain(d, { aaaa: ['::1'] });

    expect(await resolver().resolve(d)).toEqual({
      kind: 'ok',
      implicit: true,
      records: [],
      hosts: [{ exchange: d, priority: 0, addresses: ['::1'] }],
    });
  });

  it('reports nxdomain for a name that does not exist', async () => {
    expect(await resolver().resolve(freshDomain())).toEqual({ kind: 'nxdomain' });
  });

  it('reports no_mail_host when the domain has neither MX nor A/AAAA', async () => {
    const d = freshDomain();
    server.setDomain(d, {});

    expect(await resolver().resolve(d)).toEqual({ kind: 'no_mail_host', records: [] });
  });

  it('reports no_mail_host with the records when every MX target is NXDOMAIN', async () => {
    const d = freshDomain();
    server.setDomain(d, {
      mx: [
        { exchange: `gone1.${d}`, priority: 10 },
        { exchange: `gone2.${d}`, priority: 20 },
      ],
    });

    expect(await resolver().resolve(d)).toEqual({
      kind: 'no_mail_host',
      records: [
        { exchange: `gone1.${d}`, priority: 10 },
        { exchange: `gone2.${d}`, priority: 20 },
      ],
    });
  });

  it('drops MX targets without an address and keeps the others', async () => {
    const d = freshDomain();
    server.setDomain(d, {
      mx: [
        { exchange: `gone.${d}`, priority: 10 },
        { exchange: `noaddr.${d}`, priority: 15 },
        { exchange: `live.${d}`, priority: 20 },
      ],
    });
    server.setDomain(`noaddr.${d}`, {});
    server.setDomain(`live.${d}`, { a: ['127.0.0.7'] });

    const outcome = await resolver().resolve(d);

    expect(outcome.kind === 'ok' && outcome.hosts).toEqual([
      { exchange: `live.${d}`, priority: 20, addresses: ['127.0.0.7'] },
    ]);
    expect(outcome.kind === 'ok' && outcome.records).toHaveLength(3);
  });

  it('reports an error, not no_mail_host, when the MX targets could not be looked up', async () => {
    const d = freshDomain();
    server.setDomain(d, { mx: [{ exchange: `broken.${d}`, priority: 10 }] });
    server.setServfail(`broken.${d}`);

    expect(await resolver().resolve(d)).toEqual({ kind: 'error', detail: 'ESERVFAIL' });
  });

  it('recognises a null MX (RFC 7505)', async () => {
    const d = freshDomain();
    server.setNullMx(d);

    expect(await resolver().resolve(d)).toEqual({ kind: 'null_mx' });
  });

  it('reports SERVFAIL as an error', async () => {
    const d = freshDomain();
    server.setServfail(d);

    expect(await resolver().resolve(d)).toEqual({ kind: 'error', detail: 'ESERVFAIL' });
  });

  it('reports a server that never answers as a timeout error', async () => {
    const d = freshDomain();
    server.setSilent(d);

    expect(await resolver().resolve(d)).toEqual({ kind: 'error', detail: 'ETIMEOUT' });
  });

  it('gives up on a silent server after timeout × tries, not after c-ares doubling retries', async () => {
    const d = freshDomain();
    server.setSilent(d);
    // c-ares alone doubles its timeout on every try: 200 + 400 + 800 ms for 3 tries. The engine
    // bounds the whole lookup by timeout × tries = 2 × 50 = 100 ms. The margin (1.3 s) is far
    // larger than any scheduling delay, so the order tests the bound, not the machine's load.
    const raw = new dns.Resolver({ timeout: 200, tries: 3 });
    raw.setServers([server.address]);
    const settled: string[] = [];

    await Promise.all([
      raw.resolveMx(d).catch(() => settled.push('raw c-ares, 3 tries of 200 ms')),
      resolver({}, { timeoutMs: 50, tries: 2 })
        .resolve(d)
        .then((outcome) => settled.push(`engine ${outcome.kind}`)),
    ]);

    expect(settled).toEqual(['engine error', 'raw c-ares, 3 tries of 200 ms']);
  });

  it('answers a second lookup of a domain from the cache', async () => {
    const d = freshDomain();
    server.setDomain(d, { mx: [{ exchange: `mx.${d}`, priority: 10 }] });
    server.setDomain(`mx.${d}`, { a: ['127.0.0.2'] });
    const r = resolver();

    const first = await r.resolve(d);
    const before = server.queries.length;
    const second = await r.resolve(d.toUpperCase() + '.');

    expect(second).toEqual(first);
    expect(server.queries.length).toBe(before);
  });

  it('caches a negative answer for the negative TTL, then asks again', async () => {
    const d = freshDomain();
    const r = resolver();

    expect(await r.resolve(d)).toEqual({ kind: 'nxdomain' });
    server.setDomain(d, { a: ['127.0.0.2'] });
    now += NEGATIVE_TTL - 1;
    expect(await r.resolve(d)).toEqual({ kind: 'nxdomain' });
    expect(server.queryCount(d, 'MX')).toBe(1);

    now += 1;
    expect((await r.resolve(d)).kind).toBe('ok');
    expect(server.queryCount(d, 'MX')).toBe(2);
  });

  it('keeps a positive answer for the positive TTL, then asks again', async () => {
    const d = freshDomain();
    server.setDomain(d, { a: ['127.0.0.2'] });
    const r = resolver();

    await r.resolve(d);
    now += POSITIVE_TTL - 1;
    await r.resolve(d);
    expect(server.queryCount(d, 'MX')).toBe(1);

    now += 1;
    server.setDomain(d, { a: ['127.0.0.9'] });
    const refreshed = await r.resolve(d);
    expect(refreshed.kind === 'ok' && refreshed.hosts[0]!.addresses).toEqual(['127.0.0.9']);
    expect(server.queryCount(d, 'MX')).toBe(2);
  });

  it('caches a transient error only for a few seconds', async () => {
    const d = freshDomain();
    server.setServfail(d);
    const r = resolver();

    expect((await r.resolve(d)).kind).toBe('error');
    server.setDomain(d, { a: ['127.0.0.2'] });
    expect((await r.resolve(d)).kind).toBe('error');
    expect(server.queryCount(d, 'MX')).toBe(1);

    now += 5_000;
    expect((await r.resolve(d)).kind).toBe('ok');
  });

  it('shares one query among concurrent lookups of the same domain', async () => {
    const d = freshDomain();
    server.setDomain(d, { mx: [{ exchange: `mx.${d}`, priority: 10 }] });
    server.setDomain(`mx.${d}`, { a: ['127.0.0.2'] });
    server.setDelay(30);
    const r = resolver();

    try {
      const outcomes = await Promise.all(Array.from({ length: 5 }, () => r.resolve(d)));
      expect(new Set(outcomes.map((o) => o.kind))).toEqual(new Set(['ok']));
    } finally {
      server.setDelay(0);
    }
    expect(server.queryCount(d, 'MX')).toBe(1);
    expect(server.queryCount(`mx.${d}`, 'A')).toBe(1);
  });

  it('keeps at most cacheSize domains, dropping the least recently used', async () => {
    const [a, b, c] = [freshDomain(), freshDomain(), freshDomain()];
    for (const d of [a, b, c]) server.setDomain(d, { a: ['127.0.0.2'] });
    const r = resolver({ cacheSize: 2 });

    await r.resolve(a);
    await r.resolve(b);
    await r.resolve(a); // a is now the most recently used
    await r.resolve(c); // evicts b
    await r.resolve(a);
    await r.resolve(b);

    expect(server.queryCount(a, 'MX')).toBe(1);
    expect(server.queryCount(b, 'MX')).toBe(2);
    expect(server.queryCount(c, 'MX')).toBe(1);
  });

  it('resolves address literals to themselves without any query', async () => {
    const r = resolver();
    const before = server.queries.length;

    expect(await r.resolve('[127.0.0.8]')).toEqual({
      kind: 'ok',
      implicit: true,
      records: [],
      hosts: [{ exchange: '127.0.0.8', priority: 0, addresses: ['127.0.0.8'] }],
    });
    expect(await r.resolve('[IPv6:2001:db8::1]')).toEqual({
      kind: 'ok',
      implicit: true,
      records: [],
      hosts: [{ exchange: '2001:db8::1', priority: 0, addresses: ['2001:db8::1'] }],
    });
    expect(server.queries.length).toBe(before);
  });

  it('follows a truncated UDP answer over TCP', async () => {
    const d = freshDomain();
    const mx = Array.from({ length: 120 }, (_, i) => ({ exchange: `mail-${i}.${d}`, priority: i }));
    server.setDomain(d, { mx });
    server.setDomain(`mail-0.${d}`, { a: ['127.0.0.2'] });

    const outcome = await resolver().resolve(d);

    expect(outcome.kind === 'ok' && outcome.records).toHaveLength(120);
    expect(outcome.kind === 'ok' && outcome.hosts.map((h) => h.exchange)).toEqual([`mail-0.${d}`]);
    const transports = server.queries.filter((q) => q.name === d && q.type === 'MX').map((q) => q.transport);
    expect(transports).toEqual(['udp', 'tcp']);
  });

  it('answers lookups in flight with a cancelled error when closed', async () => {
    const d = freshDomain();
    server.setSilent(d);
    const r = resolver({}, { timeoutMs: 5_000 });

    const pending = r.resolve(d);
    await new Promise((resolve) => setTimeout(resolve, 20));
    r.close();

    expect(await pending).toEqual({ kind: 'error', detail: 'ECANCELLED' });
  });

  it('rejects a DNS server given as a host name, with a clear message', () => {
    expect(() => resolver({}, { servers: ['dns.example.test'] })).toThrow(/invalid DNS server/);
  });
});

describe('classifyDnsError', () => {
  it.each([
    ['ENOTFOUND', 'permanent'],
    ['ENODATA', 'permanent'],
    ['ESERVFAIL', 'transient'],
    ['ETIMEOUT', 'transient'],
    ['ECONNREFUSED', 'transient'],
    ['ESOMETHINGNEW', 'transient'],
  ])('classifies %s as %s', (code, expected) => {
    expect(classifyDnsError(code)).toBe(expected);
  });
});

describe('invalidDnsServers', () => {
  it('accepts IPv4 and IPv6 addresses with or without a port', () => {
    expect(invalidDnsServers(['127.0.0.1', '127.0.0.1:5353', '::1', '[::1]:5353', '2001:db8::53'])).toEqual(
      [],
    );
  });

  it('returns host names, bad ports and unbracketed IPv6 ports', () => {
    expect(
      invalidDnsServers(['dns.example.test', '127.0.0.1:99999', '127.0.0.1:', '[::1]', 'localhost:53']),
    ).toEqual(['dns.example.test', '127.0.0.1:99999', '127.0.0.1:', '[::1]', 'localhost:53']);
  });
});

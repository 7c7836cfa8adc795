/**
 * Egress pools through real sockets: the engine binds its connections to the source addresses
 * 127.0.0.2-4 (Linux routes all of 127/8 to the loopback interface, so binding needs no set-up)
 * and the Postfix-like MTA (test/kit/postfix-like-mta.ts) on 127.0.6.1 records the client
 * address of every session (`socket.remoteAddress`), the HELO name it sent, and the most
 * sessions open at once per (host, client) pair. Every assertion is about what the server saw
 * or what the engine returned.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine, BatchEngineOptions } from '../../src/engine/batch/types.js';
import {
  buildEgresses,
  pairKey,
  parseSourceAddress,
  refusesTheClient,
} from '../../src/engine/egress/egress.js';
import { ReplyParser } from '../../src/engine/smtp/reply.js';
import type { VerificationResult, Verifier } from '../../src/engine/types.js';
import { createVerifier } from '../../src/engine/verifier.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { PostfixLikeMta } from '../kit/postfix-like-mta.js';
import { startPostfixLikeMta } from '../kit/postfix-like-mta.js';

const MX = '127.0.6.1';
const EGRESSES = { '127.0.0.2': 'egress-a.test', '127.0.0.3': 'egress-b.test', '127.0.0.4': 'egress-c.test' };
const SOURCE_ADDRESSES = Object.entries(EGRESSES).map(([ip, name]) => `${ip}=${name}`);
const REFUSED = '127.0.0.3';
const CAP = 2;

/** Mailboxes: local parts starting with "user"; everything else is unknown. */
const mailbox = (address: string): string =>
  address.startsWith('user')
    ? '250 2.1.5 Ok'
    : `550 5.1.1 <${address}>: Recipient address rejected: User unknown`;

interface World {
  mta: PostfixLikeMta;
  engine(overrides?: Partial<BatchEngineOptions>): BatchEngine;
  verifier(): Verifier;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One MX host for `pool.test`; `refuse(client)` answers every RCPT from that client instead of the mailbox (null: the mailbox). */
async function world(refuse: (client: string) => string | null = () => null): Promise<World> {
  const mta = await startPostfixLikeMta({
    hosts: [MX],
    latencyMs: 5,
    inFlowDelayMs: 0,
    record: true,
    rcpt: (address, { client }) => refuse(client) ?? mailbox(address),
  });
  const dns = await startDnsServer();
  cleanups.push(
    () => mta.close(),
    () => dns.close(),
  );
  dns.setDomain('mx.test', { a: [MX] });
  dns.setDomain('pool.test', { mx: [{ exchange: 'mx.test', priority: 10 }] });
  const config = loadConfig(
    {
      dnsServer: dns.address,
      smtpPort: String(mta.port),
      allowInternalTargets: 'true',
      sourceAddress: SOURCE_ADDRESSES,
    },
    {},
  );
  return {
    mta,
    engine: (overrides = {}) => {
      const engine = createBatchEngine({
        ...config.engine,
        concurrency: 50,
        perHostConcurrency: CAP,
        greylistRetries: 0,
        greylistDelayMs: 20,
        timeoutMs: 2000,
        hostBackoffMs: 10,
        // Many short sessions, so that every egress gets several.
        itemsPerSession: 5,
        recipientsPerSession: 20,
        ...overrides,
      });
      cleanups.push(() => engine.close());
      return engine;
    },
    verifier: () => {
      const verifier = createVerifier(config.engine);
      cleanups.push(() => verifier.close());
      return verifier;
    },
  };
}

function addresses(count: number, local = 'user'): string[] {
  return Array.from({ length: count }, (_, i) => `${local}${i}@pool.test`);
}

function tally(results: VerificationResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results)
    out[`${r.status}/${r.reason ?? '-'}`] = (out[`${r.status}/${r.reason ?? '-'}`] ?? 0) + 1;
  return out;
}

/** The HELO name of each recorded session, by client address. */
function heloNamesByClient(mta: PostfixLikeMta): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const record of mta.stats().records) {
    const ehlo = record.exchanges.find((e) => /^(EHLO|HELO) /i.test(e.command));
    if (ehlo !== undefined) (out[record.client] ??= []).push(ehlo.command.slice(5));
  }
  return out;
}

describe('egress settings', () => {
  it('builds one egress per source address (with its HELO name) and per proxy, or the default one', () => {
    const pool = buildEgresses({
      heloName: 'probe.test',
      sourceAddresses: ['192.0.2.1=a.test', '2001:db8::1'],
      proxies: ['socks5://user:secret@10.0.0.9:1080'],
    });
    expect(pool.map((e) => [e.id, e.localAddress, e.heloName])).toEqual([
      ['192.0.2.1', '192.0.2.1', 'a.test'],
      ['2001:db8::1', '2001:db8::1', 'probe.test'],
      ['socks5://10.0.0.9:1080', null, 'probe.test'],
    ]);
    expect(pool[2]!.proxy).toMatchObject({ host: '10.0.0.9', port: 1080, userId: 'user' });
    const single = buildEgresses({ heloName: 'probe.test', proxies: [] });
    expect(single.map((e) => e.id)).toEqual(['default']);
    // The default egress keeps the keys of a deployment without egress pools.
    expect(pairKey(single[0]!, '198.51.100.7')).toBe('198.51.100.7');
    expect(pairKey(pool[0]!, '198.51.100.7')).toBe('192.0.2.1|198.51.100.7');
  });

  it('refuses a source address that is not an IP address', () => {
    expect(() => parseSourceAddress('mail.example.net')).toThrow(/not an IP address/);
    expect(parseSourceAddress(' 192.0.2.1 = a.test ')).toEqual({ address: '192.0.2.1', heloName: 'a.test' });
  });

  it.each([
    ['554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org', true],
    ['421 4.7.0 mx.test Error: too many connections from 192.0.2.1', true],
    ['421 Too many concurrent SMTP connections from this IP address; please try again later', true],
    ['421 4.7.0 mx.test Error: too many errors', false],
    ['451 4.7.1 Please try again later', false],
    ['550 Rejected', false],
    ['550 5.1.1 <a@b.test>: Recipient address rejected: User unknown', false],
  ])('reads %j as a refusal of the client address: %s', (text, expected) => {
    const [reply] = new ReplyParser().push(`${text}\r\n`);
    expect(refusesTheClient(reply!)).toBe(expected);
  });
});

describe('batch engine with an egress pool', () => {
  it('spreads sessions over the egresses, each (egress, host) pair within the per-host cap, each with its HELO name', async () => {
    const w = await world();
    const emails = [...addresses(240), ...addresses(30, 'nobody')];
    const results = await w.engine().verifyMany(emails);
    expect(tally(results)).toEqual({ 'deliverable/-': 240, 'undeliverable/smtp_rejected': 30 });

    const stats = w.mta.stats();
    expect(Object.keys(stats.sessionsByClient).sort()).toEqual(Object.keys(EGRESSES));
    for (const client of Object.keys(EGRESSES)) {
      expect(stats.sessionsByClient[client]).toBeGreaterThan(1);
      expect(stats.peakConcurrentByClient[MX]![client]).toBeLessThanOrEqual(CAP);
    }
    // The cap is per egress: together they had more sessions open at the host than one may.
    expect(stats.peakConcurrentByHost[MX]).toBeGreaterThan(CAP);
    expect(stats.maxErrorsPerSession).toBeLessThan(10);
    const helo = heloNamesByClient(w.mta);
    for (const [client, name] of Object.entries(EGRESSES))
      expect(new Set(helo[client])).toEqual(new Set([name]));
  });

  it.each([
    [
      'a blocklist refusal at RCPT',
      '554 5.7.1 Service unavailable; Client host [127.0.0.3] blocked using zen.spamhaus.org',
    ],
    [
      '421 too many connections from your address',
      '421 4.7.0 mx.test Error: too many connections from 127.0.0.3',
    ],
  ])(
    'rests an egress refused by policy (%s) for that host while the others finish the job',
    async (_label, refuse) => {
      const w = await world((client) => (client === REFUSED ? refuse : null));
      const results = await w.engine().verifyMany(addresses(200));
      // Nothing is settled on the refused egress's word: the others asked every address.
      expect(tally(results)).toEqual({ 'deliverable/-': 200 });
      const stats = w.mta.stats();
      // The refused egress opened at most its first sessions (those open before the refusal), then rested.
      expect(stats.sessionsByClient[REFUSED]).toBeLessThanOrEqual(CAP);
      for (const client of ['127.0.0.2', '127.0.0.4'])
        expect(stats.sessionsByClient[client]).toBeGreaterThan(1);
      expect(results.every((r) => r.checks.smtp.code === 250)).toBe(true);
    },
  );

  it('keeps to a host limit of sessions per client address below the cap once the host tells it', async () => {
    const mta = await startPostfixLikeMta({
      hosts: ['127.0.6.5'],
      inFlowDelayMs: 0,
      clientConnectionLimit: 1,
      rcpt: mailbox,
    });
    const dns = await startDnsServer();
    cleanups.push(
      () => mta.close(),
      () => dns.close(),
    );
    dns.setDomain('mx.test', { a: ['127.0.6.5'] });
    dns.setDomain('pool.test', { mx: [{ exchange: 'mx.test', priority: 10 }] });
    const config = loadConfig(
      {
        dnsServer: dns.address,
        smtpPort: String(mta.port),
        allowInternalTargets: 'true',
        sourceAddress: SOURCE_ADDRESSES,
      },
      {},
    );
    const engine = createBatchEngine({
      ...config.engine,
      concurrency: 50,
      perHostConcurrency: CAP,
      greylistRetries: 0,
      greylistDelayMs: 20,
      timeoutMs: 2000,
      hostBackoffMs: 10,
      itemsPerSession: 5,
      recipientsPerSession: 20,
    });
    cleanups.push(() => engine.close());
    const results = await engine.verifyMany(addresses(200));
    expect(tally(results)).toEqual({ 'deliverable/-': 200 });
    const stats = mta.stats();
    // "421 4.7.0 Error: too many connections from <ip>" at the banner while another session from
    // that address was open: that egress keeps to one session there from then on, once told.
    expect(stats.connectionLimitRefusals).toBeGreaterThan(0);
    expect(stats.connectionLimitRefusals).toBeLessThanOrEqual(Object.keys(EGRESSES).length);
    for (const client of Object.keys(EGRESSES)) expect(stats.sessionsByClient[client]).toBeGreaterThan(1);
  });

  it('gives the host up as smtp_blocked only when every egress is refused by policy', async () => {
    const w = await world(() => '554 5.7.1 Service unavailable; Client host blocked using zen.spamhaus.org');
    const results = await w.engine().verifyMany(addresses(60));
    expect(tally(results)).toEqual({ 'unknown/smtp_blocked': 60 });
    const stats = w.mta.stats();
    for (const client of Object.keys(EGRESSES))
      expect(stats.sessionsByClient[client]).toBeLessThanOrEqual(CAP);
  });
});

describe('batch sessions: what a refusal costs', () => {
  it('does not take a bare "550 Rejected" for unknown users as the host refusing the prober', async () => {
    // Such a reply is unknown/smtp_blocked for its address (the reply table does not know its
    // text), but only policy refusals in a row make the host's whole queue settle that way.
    const terse = await startPostfixLikeMta({
      hosts: ['127.0.6.3'],
      inFlowDelayMs: 0,
      rcpt: (address) => (address.startsWith('user') ? '250 2.1.5 Ok' : '550 Rejected'),
    });
    cleanups.push(() => terse.close());
    const dns = await startDnsServer();
    cleanups.push(() => dns.close());
    dns.setDomain('mx.test', { a: ['127.0.6.3'] });
    dns.setDomain('pool.test', { mx: [{ exchange: 'mx.test', priority: 10 }] });
    const config = loadConfig(
      { dnsServer: dns.address, smtpPort: String(terse.port), allowInternalTargets: 'true' },
      {},
    );
    const engine = createBatchEngine({
      ...config.engine,
      concurrency: 10,
      perHostConcurrency: 1,
      greylistRetries: 0,
      greylistDelayMs: 20,
      timeoutMs: 2000,
    });
    cleanups.push(() => engine.close());
    const results = await engine.verifyMany([...addresses(20, 'nobody'), ...addresses(20)]);
    expect(tally(results)).toEqual({ 'unknown/smtp_blocked': 20, 'deliverable/-': 20 });
  });

  it("remembers a host's per-transaction recipient limit for its next sessions", async () => {
    const limited = await startPostfixLikeMta({
      hosts: ['127.0.6.4'],
      inFlowDelayMs: 0,
      recipientLimit: 10,
      rcpt: mailbox,
      record: true,
    });
    cleanups.push(() => limited.close());
    const dns = await startDnsServer();
    cleanups.push(() => dns.close());
    dns.setDomain('mx.test', { a: ['127.0.6.4'] });
    dns.setDomain('pool.test', { mx: [{ exchange: 'mx.test', priority: 10 }] });
    const config = loadConfig(
      { dnsServer: dns.address, smtpPort: String(limited.port), allowInternalTargets: 'true' },
      {},
    );
    // One session at a time, 25 recipients each: the first learns the limit, the next ones keep to it.
    const engine = createBatchEngine({
      ...config.engine,
      concurrency: 10,
      perHostConcurrency: 1,
      greylistRetries: 0,
      greylistDelayMs: 20,
      timeoutMs: 2000,
      recipientsPerSession: 25,
    });
    cleanups.push(() => engine.close());
    const results = await engine.verifyMany(addresses(100));
    expect(tally(results)).toEqual({ 'deliverable/-': 100 });
    const stats = limited.stats();
    const told = stats.records.filter((r) => r.exchanges.some((e) => e.reply.startsWith('452')));
    expect(stats.records.length).toBeGreaterThan(3);
    // Only the first session was told "too many recipients".
    expect(told).toEqual([stats.records[0]]);
  });
});

describe('single verifications with an egress pool', () => {
  it('take the egresses in turn', async () => {
    const w = await world();
    const verifier = w.verifier();
    for (const email of addresses(6)) expect((await verifier.verify(email)).status).toBe('deliverable');
    // Warm sessions: each egress's second verification rides the session of its first.
    expect(w.mta.stats().sessionsByClient).toEqual({ '127.0.0.2': 1, '127.0.0.3': 1, '127.0.0.4': 1 });
    expect(verifier.sessionStats!()).toMatchObject({ opened: 3, reused: 3 });
    const helo = heloNamesByClient(w.mta);
    for (const [client, name] of Object.entries(EGRESSES)) expect(helo[client]).toEqual([name]);
  });

  it('skip an egress that a host refused by policy, while the others answer', async () => {
    const blocked = '554 5.7.1 Service unavailable; Client host [127.0.0.3] blocked using zen.spamhaus.org';
    const w = await world((client) => (client === REFUSED ? blocked : null));
    const verifier = w.verifier();
    const results: VerificationResult[] = [];
    for (const email of addresses(9)) results.push(await verifier.verify(email));
    // The one probe that went out through the refused egress reports the refusal; none after it.
    expect(tally(results)).toEqual({ 'deliverable/-': 8, 'unknown/smtp_blocked': 1 });
    expect(w.mta.stats().sessionsByClient[REFUSED]).toBe(1);
  });
});

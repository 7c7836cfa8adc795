/**
 * A world for the reputation guard (src/engine/egress/egress-guard.ts): three source addresses
 * (127.0.0.2-4; Linux routes all of 127/8 to loopback, so binding needs no set-up), three mail
 * hosts of the Postfix-like MTA (127.0.6.1-3, one per domain) that count sessions by client
 * address and can refuse a client by policy at RCPT, and the in-process DNS server, which also
 * serves the blocklist zone `bl.test` that `list` / `delist` edit.
 */
import pino, { type Logger } from 'pino';
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngine } from '../../src/engine/batch/types.js';
import { dnsblQueryName } from '../../src/engine/dns/dnsbl.js';
import type { EgressGate } from '../../src/engine/egress/egress.js';
import type { EgressGuard } from '../../src/engine/egress/egress-guard.js';
import type { EgressHealthStore } from '../../src/engine/egress/egress-health.js';
import { createVerifier } from '../../src/engine/verifier.js';
import type { Verifier } from '../../src/engine/types.js';
import { createEgressGuard } from '../../src/services/prober/egress-guard.service.js';
import { startDnsServer, type FakeDnsServer } from './dns-server.js';
import { startPostfixLikeMta, type PostfixLikeMta } from './postfix-like-mta.js';

export const SOURCES = ['127.0.0.2', '127.0.0.3', '127.0.0.4'] as const;
export const ZONE = 'bl.test';
export const DOMAINS = ['one.test', 'two.test', 'three.test'] as const;
const MX_HOSTS = ['127.0.6.1', '127.0.6.2', '127.0.6.3'];

/** What a Postfix with `reject_rbl_client zen.spamhaus.org` answers a listed client. */
export const BLOCK_REPLY =
  '554 5.7.1 Service unavailable; Client host [{client}] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/{client}';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface GuardWorld {
  mta: PostfixLikeMta;
  dns: FakeDnsServer;
  config: Readonly<Config>;
  /** Log lines of the guards built here. */
  logs: LogLine[];
  logger: Logger;
  /** Lists `address` on the zone (127.0.0.2, with a TXT reason) / answers the refusal code. */
  list(address: string, code?: string): void;
  delist(address: string): void;
  /** Clients whose RCPTs every host refuses with BLOCK_REPLY. */
  blocked: Set<string>;
  /** Sessions each source address has had so far, as the mail hosts saw them. */
  sessions(): Record<string, number>;
  guard(store: EgressHealthStore, now: () => number, flags?: Record<string, string>): EgressGuard;
  engine(guard?: EgressGate): BatchEngine;
  verifier(guard?: EgressGate): Verifier;
  close(): Promise<void>;
}

/** `count` mailbox addresses spread over the three domains (so over the three hosts). */
export function addresses(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `user${i}@${DOMAINS[i % DOMAINS.length]}`);
}

export async function startGuardWorld(flags: Record<string, string> = {}): Promise<GuardWorld> {
  const blocked = new Set<string>();
  const mta = await startPostfixLikeMta({
    hosts: MX_HOSTS,
    latencyMs: 1,
    inFlowDelayMs: 0,
    // Mailboxes are the local parts starting with "user": the catch-all probe is refused.
    rcpt: (address, { client }) =>
      blocked.has(client)
        ? BLOCK_REPLY.replaceAll('{client}', client)
        : address.startsWith('user')
          ? '250 2.1.5 Ok'
          : `550 5.1.1 <${address}>: Recipient address rejected: User unknown`,
  });
  const dns = await startDnsServer();
  DOMAINS.forEach((domain, i) => {
    dns.setDomain(`mx.${domain}`, { a: [MX_HOSTS[i]!] });
    dns.setDomain(domain, { mx: [{ exchange: `mx.${domain}`, priority: 10 }] });
  });
  const base: Record<string, string> = {
    dnsServer: dns.address,
    dnsTimeout: '300ms',
    dnsTries: '1',
    smtpPort: String(mta.port),
    allowInternalTargets: 'true',
    helo: 'probe.mailverdict.test',
    sourceAddress: SOURCES.map((ip) => `${ip}=egress-${ip.split('.')[3]}.mailverdict.test`).join(','),
    dnsblZone: ZONE,
    ...flags,
  };
  const config = loadConfig(base, {});
  const logs: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line.trim() !== '') logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const closers: (() => Promise<void>)[] = [];
  return {
    mta,
    dns,
    config,
    logs,
    logger,
    blocked,
    list: (address, code = '127.0.0.2') => {
      const name = dnsblQueryName(address, ZONE);
      dns.setDomain(name, { a: [code], txt: [`listed by ${ZONE}: see https://bl.test/${address}`] });
    },
    delist: (address) => dns.remove(dnsblQueryName(address, ZONE)),
    sessions: () => ({ ...mta.stats().sessionsByClient }),
    guard: (store, now, more = {}) => {
      const own = Object.keys(more).length === 0 ? config : loadConfig({ ...base, ...more }, {});
      const guard = createEgressGuard(own, { store, now, logger, syncMs: 50 });
      closers.push(() => guard.stop());
      return guard;
    },
    engine: (guard) => {
      const engine = createBatchEngine(
        {
          ...config.engine,
          concurrency: 50,
          perHostConcurrency: 2,
          greylistRetries: 0,
          greylistDelayMs: 20,
          timeoutMs: 2000,
          hostBackoffMs: 10,
          // Many short sessions, so that every egress gets several.
          itemsPerSession: 3,
          recipientsPerSession: 6,
        },
        guard === undefined ? {} : { guard },
      );
      closers.push(() => engine.close());
      return engine;
    },
    verifier: (guard) => {
      const verifier = createVerifier(config.engine, guard === undefined ? {} : { guard });
      closers.push(() => verifier.close());
      return verifier;
    },
    close: async () => {
      for (const close of closers.reverse()) await close();
      await mta.close();
      await dns.close();
    },
  };
}

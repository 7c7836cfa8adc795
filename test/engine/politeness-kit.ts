/**
 * Several batch engines, as several worker processes would run them, against one MX host: a
 * loopback fake MTA (test/kit/pipelining-mta.ts, which counts the sessions open at once per
 * host) and the in-process DNS server. `describeSharedPoliteness` is the specification of a
 * coordination shared by the engines, run on the in-process one (test/engine) and on Redis
 * (test/redis), each engine with its own coordination instance there: per-host session slots,
 * host back-off, catch-all and negative DNS answers, and the greylist retry schedule.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { EngineCoordination } from '../../src/engine/coordination.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { GreylistEntry } from '../../src/engine/batch/shared-greylist.js';
import type { BatchEngine, BatchEngineObserver, BatchEngineOptions } from '../../src/engine/batch/types.js';
import type { VerificationResult } from '../../src/engine/types.js';
import type { FakeMta, FakeMtaOptions } from '../kit/pipelining-mta.js';
import { startFakeMta } from '../kit/pipelining-mta.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';

/** The one MX host (`mx.test`) every domain of the list points to. */
export const MX_HOST = '127.0.5.1';
export const PER_HOST_CAP = 2;
const DOMAINS = Array.from({ length: 8 }, (_, i) => `d${i}.test`);

/** Mailboxes: local parts starting with "user"; everything else (the catch-all probes) is unknown. */
const mailboxes = (address: string): string =>
  address.startsWith('user') ? '250 2.1.5 OK' : `550 5.1.1 <${address}>: User unknown`;

export interface PolitenessWorld {
  mta: FakeMta;
  dns: FakeDnsServer;
  /** An engine as one worker builds it: per-host cap 2, many short sessions. */
  engine(
    coordination: EngineCoordination | undefined,
    overrides?: Partial<BatchEngineOptions>,
    observer?: BatchEngineObserver,
    logger?: { warn(obj: object): void },
  ): BatchEngine;
  close(): Promise<void>;
}

export async function politenessWorld(mta: Partial<FakeMtaOptions> = {}): Promise<PolitenessWorld> {
  // 10 ms per reply: sessions overlap long enough for every engine to open its own.
  const server = await startFakeMta({
    hosts: [MX_HOST],
    latencyMs: 10,
    rcpt: mailboxes,
    record: true,
    ...mta,
  });
  const dns = await startDnsServer();
  dns.setDomain('mx.test', { a: [MX_HOST] });
  for (const domain of DOMAINS) dns.setDomain(domain, { mx: [{ exchange: 'mx.test', priority: 10 }] });
  const config = loadConfig(
    { dnsServer: dns.address, smtpPort: String(server.port), allowInternalTargets: 'true' },
    {},
  );
  const engines: BatchEngine[] = [];
  return {
    mta: server,
    dns,
    engine(coordination, overrides = {}, observer, logger) {
      const engine = createBatchEngine(
        {
          ...config.engine,
          concurrency: 20,
          perHostConcurrency: PER_HOST_CAP,
          greylistRetries: 0,
          greylistDelayMs: 20,
          timeoutMs: 2000,
          hostBackoffMs: 10,
          // A second session opens as soon as one address waits, and each carries 5 RCPTs: each
          // engine alone keeps its 2 sessions busy, so four would show up to 8 at once.
          itemsPerSession: 1,
          recipientsPerSession: 5,
          ...overrides,
        },
        {
          ...(coordination ? { coordination } : {}),
          ...(observer ? { observer } : {}),
          ...(logger ? { logger } : {}),
        },
      );
      engines.push(engine);
      return engine;
    },
    async close() {
      await Promise.all(engines.map((e) => e.close()));
      await server.close();
      await dns.close();
    },
  };
}

/** `count` addresses over the list's domains, dealt out to `parts` engines as a job's chunks are. */
export function spreadList(count: number, parts: number, local = 'user'): string[][] {
  const out: string[][] = Array.from({ length: parts }, () => []);
  for (let i = 0; i < count; i++) out[i % parts]!.push(`${local}${i}@${DOMAINS[i % DOMAINS.length]}`);
  return out;
}

/** How many times the MTA was asked RCPT TO for each address starting with `local`. */
export function rcptsPerAddress(mta: FakeMta, local = 'user'): Map<string, number> {
  const counts = new Map<string, number>();
  for (const session of mta.stats().sessions) {
    for (const line of session.commands) {
      const address = /^RCPT TO:<([^>]*)>/.exec(line)?.[1];
      if (address?.startsWith(local)) counts.set(address, (counts.get(address) ?? 0) + 1);
    }
  }
  return counts;
}

export function statuses(results: VerificationResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results)
    out[`${r.status}/${r.reason ?? '-'}`] = (out[`${r.status}/${r.reason ?? '-'}`] ?? 0) + 1;
  return out;
}

/** How long the greylisting MTA of `greylisting()` refuses an address after its first RCPT. */
export const GREYLIST_DELAY_MS = 400;

/**
 * An MTA that greylists as postgrey does: a "user" address is refused with 450 until
 * GREYLIST_DELAY_MS after it was first asked, accepted after. `asked` holds the epoch ms of every
 * RCPT of each "user" address.
 */
export function greylisting(delayMs: number = GREYLIST_DELAY_MS): {
  mta: Partial<FakeMtaOptions>;
  asked: Map<string, number[]>;
} {
  const asked = new Map<string, number[]>();
  const rcpt = (address: string): string => {
    if (!address.startsWith('user')) return `550 5.1.1 <${address}>: User unknown`;
    const times = asked.get(address) ?? [];
    asked.set(address, times);
    times.push(Date.now());
    return Date.now() - times[0]! < delayMs ? '450 4.7.1 Greylisted, please try again later' : '250 2.1.5 OK';
  };
  return { mta: { rcpt }, asked };
}

/**
 * `dying` asks `address` once, is greylisted, and dies (is closed) before its next try, as a
 * worker whose chunk another worker then takes over.
 */
export async function greylistedThenDied(
  world: PolitenessWorld,
  address: string,
  dying: BatchEngine,
): Promise<void> {
  const dyingRun = dying.verifyMany([address]);
  dyingRun.catch(() => undefined); // rejected by the close below
  // Bounded wait until the greylisted reply was handled: its session has ended (QUIT). The bound is
  // a deadline well inside the test's time, not a count of short sleeps a loaded machine outruns.
  const answered = (): boolean =>
    world.mta
      .stats()
      .sessions.some((s) => s.commands.includes(`RCPT TO:<${address}>`) && s.commands.includes('QUIT'));
  for (const until = Date.now() + 30_000; !answered() && Date.now() < until;)
    await new Promise((r) => setTimeout(r, 5));
  expect(answered()).toBe(true);
  await dying.close();
  await expect(dyingRun).rejects.toThrow('batch engine closed');
}

export interface SharedCoordinations {
  /** The coordination of one more engine (a worker process of its own). */
  next(): Promise<EngineCoordination>;
  close(): Promise<void>;
}

/**
 * What engines sharing a coordination must do together, whatever holds it. `open` builds the
 * coordinations of one test.
 */
export function describeSharedPoliteness(label: string, open: () => SharedCoordinations): void {
  describe(`shared politeness (${label})`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    const setUp = async (mta: Partial<FakeMtaOptions> = {}) => {
      const world = await politenessWorld(mta);
      const coordinations = open();
      cleanups.push(
        () => coordinations.close(),
        () => world.close(),
      );
      return { world, coordinations };
    };

    it('four engines on one list open at most the per-host cap of sessions together, and settle each address once', async () => {
      const { world, coordinations } = await setUp();
      const lists = spreadList(200, 4);
      const engines = await Promise.all(lists.map(async () => world.engine(await coordinations.next())));
      const results = await Promise.all(engines.map((engine, i) => engine.verifyMany(lists[i]!)));

      results.forEach((r, i) => expect(r).toHaveLength(lists[i]!.length));
      expect(statuses(results.flat())).toEqual({ 'deliverable/-': 200 });
      const asked = rcptsPerAddress(world.mta);
      expect(asked.size).toBe(200);
      expect([...asked.values()].every((n) => n === 1)).toBe(true);
      const stats = world.mta.stats();
      expect(stats.peakConcurrentByHost[MX_HOST]).toBe(PER_HOST_CAP);
      // Many sessions, one after another: the slots were taken and given back, not held once.
      expect(stats.connections).toBeGreaterThan(40);
    });

    it('a host that one engine backs off gets no session from another until the back-off ends', async () => {
      let banners = 0;
      const { world, coordinations } = await setUp({
        // The first session is refused with 421 (busy); later ones are greeted.
        banner: () => (banners++ === 0 ? '421 4.3.2 busy, try later' : '220 fake-mta ESMTP'),
      });
      const backoffMs = 600;
      const opened: number[] = [];
      // One session per engine at a time, so that exactly one is refused.
      const tuning = { hostBackoffMs: backoffMs, itemsPerSession: 50 };
      const first = world.engine(await coordinations.next(), tuning);
      const second = world.engine(await coordinations.next(), tuning, {
        onSessionOpen: () => void opened.push(Date.now()),
      });
      const firstRun = first.verifyMany(['user1@d0.test']);
      firstRun.catch(() => undefined); // awaited below; closed with the engine if the test fails first
      // Bounded wait for the refused session (a few ms on loopback; seconds on a loaded machine).
      for (const until = Date.now() + 30_000; banners === 0 && Date.now() < until;)
        await new Promise((r) => setTimeout(r, 5));
      expect(banners).toBe(1);
      const refusedAt = Date.now();
      // Let the failure reach the shared health before the other engine looks.
      await new Promise((r) => setTimeout(r, 50));

      const results = await second.verifyMany(['user2@d1.test', 'user3@d1.test']);
      expect(statuses(results)).toEqual({ 'deliverable/-': 2 });
      expect(statuses(await firstRun)).toEqual({ 'deliverable/-': 1 });
      // Its first session waited out the back-off the other engine's failure started (the
      // margin: the failure was recorded a little after the banner was counted).
      expect(opened[0]! - refusedAt).toBeGreaterThanOrEqual(backoffMs - 100);
    });

    it('a catch-all answer one engine found spares the others its probe', async () => {
      const { world, coordinations } = await setUp();
      const first = world.engine(await coordinations.next());
      const second = world.engine(await coordinations.next());
      expect(statuses(await first.verifyMany(['user1@d0.test']))).toEqual({ 'deliverable/-': 1 });
      expect(statuses(await second.verifyMany(['user2@d0.test']))).toEqual({ 'deliverable/-': 1 });
      // Every RCPT not to a "user" mailbox is a catch-all probe: one for the domain, not one per engine.
      const probes = world.mta
        .stats()
        .sessions.flatMap((s) => s.commands)
        .filter((line) => line.startsWith('RCPT TO:') && !line.startsWith('RCPT TO:<user'));
      expect(probes).toHaveLength(1);
    });

    it('an address greylisted for an engine that died is not asked by another before its recorded retry time', async () => {
      const { mta, asked } = greylisting();
      const { world, coordinations } = await setUp(mta);
      const address = 'user-grey@d0.test';
      const tuning = { greylistRetries: 2, greylistDelayMs: GREYLIST_DELAY_MS };
      const dying = world.engine(await coordinations.next(), tuning);
      const successorCoordination = await coordinations.next();
      const successor = world.engine(successorCoordination, tuning);

      await greylistedThenDied(world, address, dying);
      const [first] = asked.get(address) ?? [];
      // What the dying engine left for the others: its next try, a delay after the greylisted RCPT.
      const recorded = await successorCoordination.cache<GreylistEntry>('greylist').get(address);
      expect(recorded).toMatchObject({ tries: 1 });
      expect(recorded!.retryAt).toBeGreaterThanOrEqual(first! + GREYLIST_DELAY_MS);

      const results = await successor.verifyMany([address]);

      expect(statuses(results)).toEqual({ 'deliverable/-': 1 });
      const [, second, ...more] = asked.get(address) ?? [];
      // Asked once more, not before the recorded time and soon after it, and let through. "Soon" is
      // a generous bound (a loaded machine takes seconds to open a session); what it rules out is
      // the address left waiting long past its time (the default greylist delay is 2 minutes).
      expect(more).toEqual([]);
      expect(second).toBeGreaterThanOrEqual(recorded!.retryAt);
      expect(second! - recorded!.retryAt).toBeLessThan(20_000);
    });

    it('a domain without mail hosts that one engine looked up is not looked up by another', async () => {
      const { world, coordinations } = await setUp();
      world.dns.setNxdomain('gone.test');
      const first = world.engine(await coordinations.next());
      const second = world.engine(await coordinations.next());
      for (const engine of [first, second]) {
        expect(statuses(await engine.verifyMany(['anna@gone.test']))).toEqual({
          'undeliverable/domain_not_found': 1,
        });
      }
      expect(world.dns.queryCount('gone.test', 'MX')).toBe(1);
    });
  });
}

/**
 * Issue 10, part 1, as properties: whatever the mail hosts do at each stage of the dialogue
 * (test/kit/liveness-mta.ts: normal, split across packets, 4xx, 5xx, 421, close, reset, silence,
 * garbage, a broken TLS handshake; a host cycles through up to three session scripts), `verify`
 * and `verifyMany` end within a bound computed from the settings, every address gets exactly one
 * result, no host sees more sessions at once than the per-host cap, and a host that keeps
 * failing sees no more connections than its back-off allows.
 *
 * fast-check generates the hosts, their scripts, the domains' MX lists, the addresses and the
 * engine's settings; runs are few and small (short steps and back-offs, a handful of addresses)
 * so that the suite stays fast (about 10 s for both). A host seeing more sessions than allowed
 * fails its run at once, while the call is still going; a call that does not end fails at its
 * time bound. A failing run is reported with its seed and path and not shrunk (a run that does
 * not end would make shrinking take as long as every bound): `LIVENESS_SEED=… LIVENESS_PATH=…`
 * replays it, `LIVENESS_RUNS=…` runs more.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createBatchEngine } from '../../src/engine/batch/batch-engine.js';
import type { BatchEngineOptions } from '../../src/engine/batch/types.js';
import type { VerificationResult } from '../../src/engine/types.js';
import { createVerifier } from '../../src/engine/verifier.js';
import type { FakeDnsServer } from '../kit/dns-server.js';
import { startDnsServer } from '../kit/dns-server.js';
import type { Behaviour, HostRecord, ScriptedMtas, SessionScript, Stage } from '../kit/liveness-mta.js';
import { BEHAVIOURS, STAGES, startScriptedMtas } from '../kit/liveness-mta.js';

const IPS = ['127.0.8.1', '127.0.8.2', '127.0.8.3'];
const RUNS = Number(process.env.LIVENESS_RUNS ?? 40);
/** A bound on each property's whole run that grows with LIVENESS_RUNS (a run takes 0.2-0.5 s). */
const TEST_TIMEOUT_MS = Math.max(240_000, RUNS * 1_000);
/** LIVENESS_SEED and LIVENESS_PATH (as fast-check printed them) replay a reported failure. */
const FC_OPTIONS: fc.Parameters<unknown> = {
  numRuns: RUNS,
  endOnFailure: true,
  ...(process.env.LIVENESS_SEED === undefined
    ? {}
    : { seed: Number(process.env.LIVENESS_SEED), path: process.env.LIVENESS_PATH ?? '' }),
};

let dns: FakeDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
  IPS.forEach((ip, i) => dns.setDomain(`mx${i}.prop.test`, { a: [ip] }));
});
afterAll(async () => {
  await dns.close();
});

// ---------------------------------------------------------------------------------------------
// What fast-check draws.

const FAILURES = BEHAVIOURS.filter((b) => b !== 'ok' && b !== 'split');

/**
 * A session script: at most one stage fails (any stage equally likely, so that late failures are
 * as common as early ones), in any of the ways; some stages answer split across two packets.
 */
const sessionScript: fc.Arbitrary<SessionScript> = fc
  .record({
    failAt: fc.oneof(
      { weight: 1, arbitrary: fc.constant(null) },
      { weight: 4, arbitrary: fc.constantFrom(...STAGES) },
    ),
    how: fc.constantFrom(...FAILURES),
    split: fc.subarray([...STAGES]),
    offerTls: fc.boolean(),
    brokenTls: fc.oneof(
      { weight: 10, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
      { weight: 1, arbitrary: fc.constant('waits' as const) },
    ),
    pipelining: fc.boolean(),
  })
  .map(({ failAt, how, split, offerTls, brokenTls, pipelining }) => {
    const stages: Partial<Record<Stage, Behaviour>> = {};
    for (const stage of split) stages[stage] = 'split';
    if (failAt !== null) stages[failAt] = how;
    return { stages, offerTls, brokenTls, pipelining };
  });

interface Domain {
  /** Indexes into the hosts, in MX preference order. */
  mx: number[];
  /** Local parts: "user…" exist, "nobody…" do not. */
  locals: string[];
}

interface World {
  hosts: SessionScript[][];
  domains: Domain[];
}

const world: fc.Arbitrary<World> = fc.integer({ min: 1, max: IPS.length }).chain((hostCount) =>
  fc.record({
    hosts: fc.array(fc.array(sessionScript, { minLength: 1, maxLength: 3 }), {
      minLength: hostCount,
      maxLength: hostCount,
    }),
    domains: fc.array(
      fc.record({
        mx: fc.uniqueArray(fc.integer({ min: 0, max: hostCount - 1 }), {
          minLength: 1,
          maxLength: hostCount,
        }),
        // Up to 8 addresses a domain: enough that a host which is never given up shows it.
        locals: fc.uniqueArray(
          fc
            .tuple(fc.boolean(), fc.integer({ min: 1, max: 30 }))
            .map(([exists, n]) => `${exists ? 'user' : 'nobody'}${n}`),
          { minLength: 1, maxLength: 8 },
        ),
      }),
      { minLength: 1, maxLength: 2 },
    ),
  }),
);

/** The settings that bound the engine, drawn too: the bounds must hold for any of them. */
const settings = fc.record({
  maxHostFailures: fc.integer({ min: 1, max: 3 }),
  perHostConcurrency: fc.integer({ min: 1, max: 2 }),
  // 1: a second session opens as soon as one address waits, so the per-host cap is reached.
  itemsPerSession: fc.constantFrom(1, 50),
  maxDrops: fc.integer({ min: 0, max: 2 }),
  greylistRetries: fc.integer({ min: 0, max: 1 }),
});
interface Settings {
  maxHostFailures: number;
  perHostConcurrency: number;
  itemsPerSession: number;
  maxDrops: number;
  greylistRetries: number;
}

/** Fixed settings of every run: the shortest step the engine takes (100 ms) and short back-offs. */
const FIXED = {
  timeoutMs: 100,
  hostBackoffMs: 10,
  hostBackoffMaxMs: 40,
  greylistDelayMs: 10,
  recipientsPerTransaction: 2,
  recipientsPerSession: 3,
  concurrency: 10,
} as const;

// ---------------------------------------------------------------------------------------------
// The bounds, from the settings and the size of the list.

/**
 * The longest a batch session can last: the greeting twice (a failed TLS handshake is greeted
 * again in clear text) at four steps each, then per RCPT at most three steps (RSET, MAIL FROM and
 * the RCPT, one round trip each without PIPELINING), and QUIT; each step at most `timeoutMs`.
 */
const sessionMs = (): number => (2 * 4 + 3 * FIXED.recipientsPerSession + 1) * FIXED.timeoutMs;

/**
 * How many sessions host `index` may see, given how many of them got an answer about a
 * recipient (`answered`, as the host counts them). Only such an answer ends a failure streak;
 * between two, at most `maxHostFailures` sessions fail in a row before the host is given up, plus
 * the others open then (the cap minus one). Work reaches the host in waves: each domain's DNS
 * answer, and each item moved there from a domain's earlier MX; a wave after the host was given
 * up (and its back-off ended) opens at most the cap of sessions. Sessions that open beside one
 * that takes all the work end without asking anything: at most the cap minus one per session.
 */
function sessionsAllowed(s: Settings, w: World, index: number, answered: number): number {
  const P = s.perHostConcurrency;
  const domains = w.domains.filter((d) => d.mx.includes(index));
  const moved = domains.filter((d) => d.mx[0] !== index).reduce((n, d) => n + d.locals.length + 1, 0);
  const waves = domains.length + moved;
  return answered + P * ((answered + 1) * (s.maxHostFailures + P - 1) + P * waves);
}

/**
 * How long `verifyMany` may take. Work items: the addresses and one catch-all probe per domain;
 * each is answered at most `greylistRetries` + 1 times, so a host has at most that many answered
 * sessions per item, and `sessionsAllowed` sessions in all. Each session lasts at most `sessionMs`
 * and waits at most the longest back-off; a domain's hosts may be tried one after another (next
 * MX after a failure); greylisted items wait their delays; DNS answers within its own bound.
 */
function verifyManyBoundMs(s: Settings, w: World): number {
  const items = w.domains.reduce((n, d) => n + d.locals.length + 1, 0);
  const answers = items * (s.greylistRetries + 1);
  let total = 0;
  for (let index = 0; index < w.hosts.length; index++) {
    total += sessionsAllowed(s, w, index, answers) * (sessionMs() + FIXED.hostBackoffMaxMs);
  }
  return total + items * s.greylistRetries * FIXED.greylistDelayMs + dnsBoundMs();
}

/** MX, then each host's A and AAAA, each at most `timeoutMs` × `tries` (resolver.ts). */
const dnsBoundMs = (): number => 3 * CONFIG_DNS.timeoutMs * CONFIG_DNS.tries;
const CONFIG_DNS = { timeoutMs: 500, tries: 1 };

/** A single verification: DNS, then the probe's whole budget (`timeoutMs`), and the event loop's slack. */
const verifyBound = (timeoutMs: number): number => dnsBoundMs() + timeoutMs + 500;

// ---------------------------------------------------------------------------------------------
// Running a world.

let runs = 0;

interface Running {
  mtas: ScriptedMtas;
  emails: string[];
  options: BatchEngineOptions;
  hostOf: (index: number) => HostRecord;
  cleanup(): Promise<void>;
}

async function start(w: World, s: Partial<Settings>): Promise<Running> {
  const run = ++runs;
  const ips = IPS.slice(0, w.hosts.length);
  const mtas = await startScriptedMtas(Object.fromEntries(ips.map((ip, i) => [ip, w.hosts[i]!])));
  const emails: string[] = [];
  const domains: string[] = [];
  w.domains.forEach((d, i) => {
    const domain = `d${i}.r${run}.prop.test`;
    domains.push(domain);
    dns.setDomain(domain, {
      mx: d.mx.map((h, p) => ({ exchange: `mx${h}.prop.test`, priority: 10 * (p + 1) })),
    });
    for (const local of d.locals) emails.push(`${local}@${domain}`);
  });
  const config = loadConfig(
    {
      dnsServer: dns.address,
      dnsTimeout: `${CONFIG_DNS.timeoutMs}ms`,
      dnsTries: String(CONFIG_DNS.tries),
      smtpPort: String(mtas.port),
      allowInternalTargets: 'true',
    },
    {},
  );
  return {
    mtas,
    emails,
    options: { ...config.engine, ...FIXED, ...s } as BatchEngineOptions,
    hostOf: (index) => mtas.host(ips[index]!),
    cleanup: async () => {
      await mtas.close();
      for (const domain of domains) dns.remove(domain);
    },
  };
}

/**
 * Rejects when `promise` has not settled after `ms`, or as soon as `overrun()` names a reason (a
 * host reconnecting beyond its bound fails the run then, not at the end of a long time bound).
 */
async function within<T>(
  ms: number,
  promise: Promise<T>,
  what: string,
  overrun: () => string | null = () => null,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let watch: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
    watch = setInterval(() => {
      const reason = overrun();
      if (reason !== null) reject(new Error(`${what}: ${reason}`));
    }, 20);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
    clearInterval(watch);
  }
}

/** Sessions of a host, a clear-text retry after a broken TLS handshake counted with its first try. */
const sessionsOf = (host: HostRecord): number => host.sessions.filter((session) => !session.brokenTls).length;

/** Every script of the host ends its sessions at the greeting (banner, EHLO or STARTTLS). */
function failsEveryGreeting(scripts: SessionScript[]): boolean {
  const ends = (b: Behaviour | undefined): boolean => b !== undefined && b !== 'ok' && b !== 'split';
  return scripts.every((script) => {
    const stages = script.stages ?? {};
    if (script.brokenTls === true || script.brokenTls === 'waits') return false;
    // A 5xx to EHLO is followed by HELO, answered the same: refused too.
    if (ends(stages.banner) || ends(stages.ehlo)) return true;
    // STARTTLS refused with 4xx/5xx goes on in clear text: only the others end the session.
    return (
      script.offerTls === true &&
      stages.starttls !== undefined &&
      !['ok', 'split', '4xx', '5xx'].includes(stages.starttls)
    );
  });
}

function expectOneResultEach(emails: string[], results: VerificationResult[], reported: number[]): void {
  expect(results).toHaveLength(emails.length);
  results.forEach((r, i) => expect(r.email).toBe(emails[i]));
  expect([...reported].sort((a, b) => a - b)).toEqual(emails.map((_, i) => i));
}

/**
 * Runs a property; a failure names the command that replays exactly its failing run (printed on
 * its own line too, so that it is found in a long CI log).
 */
async function check<T>(testName: string, property: fc.IAsyncProperty<T>): Promise<void> {
  const details = await fc.check(property, FC_OPTIONS as fc.Parameters<T>);
  if (!details.failed) return;
  const replay =
    `LIVENESS_SEED=${details.seed} LIVENESS_PATH=${details.counterexamplePath ?? ''} ` +
    `npx vitest run test/engine/liveness-property.test.ts -t '${testName}'`;
  console.error(`Replay the failing liveness run: ${replay}`);
  throw new Error(`${fc.defaultReportMessage(details) ?? 'property failed'}\nReplay: ${replay}`);
}

// ---------------------------------------------------------------------------------------------

describe('liveness properties', () => {
  it(
    'verifyMany ends within its bound, answers each address once, keeps to the per-host cap and back-off',
    async () => {
      await check(
        'verifyMany ends within its bound',
        fc.asyncProperty(world, settings, async (w, s) => {
          const running = await start(w, s);
          const engine = createBatchEngine(running.options);
          try {
            const reported: number[] = [];
            const overrun = (): string | null => {
              for (let index = 0; index < w.hosts.length; index++) {
                const host = running.hostOf(index);
                const answered = host.sessions.filter((session) => session.answeredRcpts > 0).length;
                const allowed = sessionsAllowed(s, w, index, answered);
                if (sessionsOf(host) > allowed)
                  return `host ${index} saw ${sessionsOf(host)} sessions, ${answered} answered: more than ${allowed}`;
              }
              return null;
            };
            const results = await within(
              verifyManyBoundMs(s, w),
              engine.verifyMany(running.emails, { onResult: (i) => void reported.push(i) }),
              'verifyMany',
              overrun,
            );
            expect(overrun()).toBeNull();
            expectOneResultEach(running.emails, results, reported);
            for (const r of results) {
              // A mailbox that does not exist is never reported as such by a host that failed.
              if (r.reason === 'smtp_rejected') expect(r.email.startsWith('nobody')).toBe(true);
              if (r.status === 'deliverable') expect(r.email.startsWith('user')).toBe(true);
            }
            await engine.close();
            w.hosts.forEach((scripts, index) => {
              const host = running.hostOf(index);
              expect(host.peakConcurrent).toBeLessThanOrEqual(s.perHostConcurrency);
              if (!failsEveryGreeting(scripts)) return;
              // Every session fails before any work: a new one opens only after a failure and its
              // back-off, so any `cap` + 1 consecutive sessions span at least the first back-off.
              const accepted = host.sessions.map((session) => session.acceptedAt);
              for (let j = s.perHostConcurrency; j < accepted.length; j++) {
                expect(accepted[j]! - accepted[j - s.perHostConcurrency]!).toBeGreaterThanOrEqual(
                  FIXED.hostBackoffMs - 2,
                );
              }
            });
          } finally {
            await engine.close();
            await running.cleanup();
          }
        }),
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'verify ends within its budget, answers once, and connects to no host again while it is backed off',
    async () => {
      await check(
        'verify ends within its budget',
        fc.asyncProperty(world, async (w) => {
          const running = await start(w, {});
          // A clock that stands still: a host backed off stays backed off for the whole run.
          const verifier = createVerifier(running.options, { clock: () => 1_700_000_000_000 });
          const timeoutMs = 300;
          try {
            for (const email of running.emails) {
              const result = await within(
                verifyBound(timeoutMs),
                verifier.verify(email, { timeoutMs }),
                'verify',
              );
              expect(result.email).toBe(email);
              if (result.status === 'deliverable') expect(email.startsWith('user')).toBe(true);
              if (result.reason === 'smtp_rejected') expect(email.startsWith('nobody')).toBe(true);
            }
            w.hosts.forEach((_, index) => {
              const sessions = running.hostOf(index).sessions;
              // After a session that got no answer about a recipient (a failure), no connection at
              // all. A broken TLS handshake is not one: the same greeting goes on in clear text.
              const first = sessions.findIndex(
                (session) => !session.brokenTls && session.answeredRcpts === 0,
              );
              if (first !== -1) expect(sessions.length - first - 1).toBe(0);
            });
          } finally {
            await verifier.close();
            await running.cleanup();
          }
        }),
      );
    },
    TEST_TIMEOUT_MS,
  );
});

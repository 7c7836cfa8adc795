/**
 * The reputation guard shared through real Redis: several guards on one prefix stand for several
 * `serve` / `worker` processes. One of them per interval queries the blocklists (the in-process
 * DNS server counts the questions), all of them rest a listed or degraded egress (the
 * Postfix-like hosts count sessions by client address), and all bring it back. `mailverdict
 * egresses --redis-url` shows the shared state.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/api/metrics.js';
import { loadConfig } from '../../src/config.js';
import { createRuntime, startServer } from '../../src/runtime.js';
import { createRedisEgressHealth } from '../../src/redis/egress-health.js';
import { dnsblQueryName } from '../../src/engine/dns/dnsbl.js';
import { cleanEnv, runCli } from '../kit/cli.js';
import { ReplyParser, type SmtpReply } from '../../src/engine/smtp/reply.js';
import { addresses, BLOCK_REPLY, startGuardWorld, ZONE, type GuardWorld } from '../kit/guard-world.js';
import { waitFor } from '../kit/wait-for.js';
import { skipWithoutRedis, testRedis, TEST_REDIS_URL, type TestRedis } from './redis-kit.js';

const skip = skipWithoutRedis('egress guard on Redis');
const LISTED = '127.0.0.3';

let world: GuardWorld | null = null;
let redis: TestRedis | null = null;
afterEach(async () => {
  await world?.close();
  await redis?.close();
  world = null;
  redis = null;
});

async function setUp(flags: Record<string, string> = {}): Promise<{ w: GuardWorld; r: TestRedis }> {
  world = await startGuardWorld(flags);
  redis = testRedis();
  return { w: world, r: redis };
}

/** A guard as one more process on the test's Redis prefix would have it. */
async function processGuard(w: GuardWorld, r: TestRedis, flags: Record<string, string> = {}) {
  const store = createRedisEgressHealth(await r.connect(), { keyPrefix: r.prefix });
  return w.guard(store, Date.now, flags);
}

function reply(line: string): SmtpReply {
  return new ReplyParser().push(`${line}\r\n`)[0]!;
}

function growth(before: Record<string, number>, after: Record<string, number>): number {
  return (after[LISTED] ?? 0) - (before[LISTED] ?? 0);
}

describe.skipIf(skip)('the reputation guard on Redis', () => {
  it('queries the blocklists once per interval for all processes, and all of them rest the listed egress', async () => {
    const { w, r } = await setUp();
    w.list(LISTED);
    const guards = [await processGuard(w, r), await processGuard(w, r), await processGuard(w, r)];
    for (const guard of guards) await guard.tick();
    expect(w.dns.queryCount(dnsblQueryName(LISTED, ZONE), 'A')).toBe(1);
    expect(guards.map((g) => g.usable(LISTED))).toEqual([false, false, false]);
    expect(guards.map((g) => g.usable('127.0.0.2'))).toEqual([true, true, true]);

    // The third process never asked, yet its batch engine keeps off the listed egress.
    const results = await w.engine(guards[2]).verifyMany(addresses(60));
    expect(results.every((x) => x.status === 'deliverable')).toBe(true);
    expect(w.sessions()[LISTED]).toBeUndefined();
  });

  it('brings a delisted egress back in every process after the next shared check', async () => {
    const { w, r } = await setUp({ egressCheckInterval: '300ms' });
    w.list(LISTED);
    const [a, b] = [await processGuard(w, r), await processGuard(w, r)];
    await a.tick();
    await b.tick();
    expect(b.usable(LISTED)).toBe(false);
    w.delist(LISTED);
    a.start();
    b.start();
    await waitFor(
      'both back in service',
      async () => (a.usable(LISTED) && b.usable(LISTED)) || undefined,
      5000,
      50,
    );
    // One check per interval in all: the lease held, whichever process took it.
    const asked = w.dns.queryCount(dnsblQueryName(LISTED, ZONE), 'A');
    expect(b.statuses()[1]).toMatchObject({ state: 'ok', reason: null });
    const before = w.sessions();
    await w.engine(b).verifyMany(addresses(60));
    expect(growth(before, w.sessions())).toBeGreaterThan(0);
    await a.stop();
    await b.stop();
    expect(asked).toBeLessThanOrEqual(1 + Math.ceil(5000 / 300));
  });

  it('counts run-time refusals across processes and rests the degraded egress in all of them', async () => {
    const { w, r } = await setUp({ egressCheckInterval: 'off' });
    const [a, b] = [await processGuard(w, r), await processGuard(w, r)];
    const egress = { id: LISTED, localAddress: LISTED, heloName: 'egress-3.mailverdict.test', proxy: null };
    const refusal = reply(BLOCK_REPLY.replaceAll('{client}', LISTED));
    // Two hosts refuse process a, a third refuses process b: three distinct hosts in the window.
    a.observe(egress, 'mx.one.test', 'rcpt', refusal);
    a.observe(egress, 'mx.two.test', 'rcpt', refusal);
    await a.idle();
    expect(a.statuses()[1]!.state).toBe('ok');
    b.observe(egress, 'mx.three.test', 'banner', refusal);
    await b.idle();
    expect(b.statuses()[1]!.state).toBe('degraded');
    await a.tick();
    expect(a.statuses()[1]!.state).toBe('degraded');
    // Process a's batch engine keeps off the egress that process b degraded.
    const before = w.sessions();
    await w.engine(a).verifyMany(addresses(60));
    expect(growth(before, w.sessions())).toBe(0);

    // `mailverdict egresses` shows the shared state.
    const cli = await runCli(
      [
        'egresses',
        '--json',
        '--redis-url',
        TEST_REDIS_URL,
        '--redis-key-prefix',
        r.prefix,
        '--egress-check-interval',
        'off',
        '--source-address',
        '127.0.0.2,127.0.0.3,127.0.0.4',
        '--dns-server',
        w.dns.address,
      ],
      cleanEnv(),
    );
    expect(cli.code).toBe(1);
    const report = JSON.parse(cli.stdout) as {
      shared: boolean;
      egresses: { egress: string; state: string; reason: string }[];
    };
    expect(report.shared).toBe(true);
    expect(report.egresses[1]).toMatchObject({ egress: LISTED, state: 'degraded' });
    expect(report.egresses[1]!.reason).toMatch(/^3 mail hosts refused it by policy/);
  });

  it('brings a degraded egress back when its rest ends', async () => {
    // A rest long enough that a loaded machine's slowness cannot end it before b looks (with
    // 400 ms, b went straight to ok at a load average of 25 and never saw it degraded).
    const { w, r } = await setUp({ egressCheckInterval: 'off', egressBlockRest: '3s' });
    w.blocked.add(LISTED);
    const [a, b] = [await processGuard(w, r), await processGuard(w, r)];
    await w.engine(a).verifyMany(addresses(90));
    await a.idle();
    expect(a.statuses()[1]!.state).toBe('degraded');
    w.blocked.clear();
    b.start();
    await waitFor(
      'b saw it',
      async () => (b.statuses()[1]!.state === 'degraded' ? true : undefined),
      5000,
      20,
    );
    await waitFor('b back', async () => (b.statuses()[1]!.state === 'ok' ? true : undefined), 30_000, 20);
    expect(b.usable(LISTED)).toBe(true);
    const before = w.sessions();
    await w.engine(b).verifyMany(addresses(60));
    expect(growth(before, w.sessions())).toBeGreaterThan(0);
  });

  it('shows the shared state on the /metrics of another serve process', async () => {
    const { w, r } = await setUp({ egressCheckInterval: 'off' });
    await r.connect(); // for the clean-up of the prefix
    const dir = mkdtempSync(join(tmpdir(), 'mv-guard-'));
    const flags = {
      dataDir: dir,
      port: '0',
      redisUrl: TEST_REDIS_URL,
      redisKeyPrefix: r.prefix,
      sourceAddress: '127.0.0.2,127.0.0.3,127.0.0.4',
      dnsServer: w.dns.address,
      allowInternalTargets: 'true',
      dnsblZone: ZONE,
      egressCheckInterval: 'off',
    };
    const runtimes = [
      await createRuntime(loadConfig(flags, {}), { logger: pino({ level: 'silent' }) }),
      await createRuntime(loadConfig(flags, {}), { logger: pino({ level: 'silent' }) }),
    ];
    const server = await startServer(runtimes[1]!, { metrics: createMetrics() });
    try {
      const [a, b] = runtimes.map((runtime) => runtime.guard);
      const egress = { id: LISTED, localAddress: LISTED, heloName: 'egress-3.mailverdict.test', proxy: null };
      const refusal = reply(BLOCK_REPLY.replaceAll('{client}', LISTED));
      for (const host of ['mx.one.test', 'mx.two.test', 'mx.three.test'])
        a!.observe(egress, host, 'banner', refusal);
      await a!.idle();
      await b!.tick();
      const text = await (await fetch(`${server.url}/metrics`)).text();
      expect(text).toContain(`mailverdict_egress_state{egress="${LISTED}",state="degraded"} 1`);
      expect(text).toContain('mailverdict_egress_state{egress="127.0.0.2",state="ok"} 1');
    } finally {
      await server.close();
      for (const runtime of runtimes) await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

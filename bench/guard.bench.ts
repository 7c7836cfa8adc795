/**
 * `npm run bench:guard`: what the reputation guard (src/engine/egress/egress-guard.ts) costs per
 * verification. The same work runs with and without a guard, interleaved in rounds so that a
 * change in the machine's load hits both arms alike, in one process and one run:
 *
 * - batch: `verifyMany` of `--batch` addresses over three source addresses (127.0.0.2-4) to three
 *   Postfix-like hosts on loopback; arms: no guard, a guard with every egress in service, a guard
 *   with one egress listed (the resting filter's path);
 * - single: `verify` of `--single` addresses one after the other (the single prober's rotation);
 * - the guard's two calls on their own: `usableEgresses` over three lanes, and `observe` of a
 *   250 reply (what every decided probe calls), in ns per call.
 *
 * Figures: wall ms and process CPU µs per address, and the ratio guard / no guard of each.
 *
 *   --batch 1500       addresses per batch round
 *   --single 150       addresses per single-verification round
 *   --rounds 6         rounds per arm
 *   --max-seconds 150  stop starting rounds after this long
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import os from 'node:os';
import { buildEgresses, usableEgresses, type EgressGate } from '../src/engine/egress/egress.js';
import { createLocalEgressHealth } from '../src/engine/egress/egress-health.js';
import type { SmtpReply } from '../src/engine/smtp/reply.js';
import { addresses, startGuardWorld, SOURCES } from '../test/kit/guard-world.js';

const { values } = parseArgs({
  options: {
    batch: { type: 'string', default: '1500' },
    single: { type: 'string', default: '150' },
    rounds: { type: 'string', default: '6' },
    'max-seconds': { type: 'string', default: '150' },
  },
});
const BATCH = Number(values.batch);
const SINGLE = Number(values.single);
const ROUNDS = Number(values.rounds);
const DEADLINE = performance.now() + Number(values['max-seconds']) * 1000;

interface Tally {
  addresses: number;
  wallMs: number;
  cpuUs: number;
}
const tally = (): Tally => ({ addresses: 0, wallMs: 0, cpuUs: 0 });

async function measure(into: Tally, count: number, work: () => Promise<unknown>): Promise<void> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  into.wallMs += performance.now() - started;
  const used = process.cpuUsage(cpu);
  into.cpuUs += used.user + used.system;
  into.addresses += count;
}

const world = await startGuardWorld();
const inService = world.guard(createLocalEgressHealth(), Date.now);
const oneListed = world.guard(createLocalEgressHealth(), Date.now);
await inService.tick();
world.list(SOURCES[1]);
await oneListed.tick();
if (oneListed.usable(SOURCES[1]) || !inService.usable(SOURCES[1])) throw new Error('guards not as set up');

const arms: { name: string; guard: EgressGate | undefined; batch: Tally; single: Tally }[] = [
  { name: 'no guard', guard: undefined, batch: tally(), single: tally() },
  { name: 'guard, all in service', guard: inService, batch: tally(), single: tally() },
  { name: 'guard, one egress listed', guard: oneListed, batch: tally(), single: tally() },
];

// Warm-up: DNS caches, JIT, the hosts' first sessions.
await world.engine().verifyMany(addresses(300));
let rounds = 0;
for (; rounds < ROUNDS && performance.now() < DEADLINE; rounds++) {
  for (const arm of arms) {
    const engine = world.engine(arm.guard);
    await measure(arm.batch, BATCH, () => engine.verifyMany(addresses(BATCH)));
    await engine.close();
    if (arm.name === 'guard, one egress listed') continue;
    const verifier = world.verifier(arm.guard);
    await measure(arm.single, SINGLE, async () => {
      for (const address of addresses(SINGLE)) await verifier.verify(address);
    });
    await verifier.close();
  }
}

// The two calls alone.
const lanes = buildEgresses({ heloName: 'probe.test', sourceAddresses: [...SOURCES], proxies: [] });
const accepted: SmtpReply = { code: 250, enhancedCode: '2.1.5', lines: ['2.1.5 Ok'], message: 'Ok' };
const CALLS = 1_000_000;
let sink = 0;
let started = performance.now();
for (let i = 0; i < CALLS; i++) sink += usableEgresses(inService, lanes, (e) => e).length;
const usableNs = ((performance.now() - started) * 1e6) / CALLS;
started = performance.now();
for (let i = 0; i < CALLS; i++) inService.observe(lanes[i % 3]!, 'mx.one.test', 'rcpt', accepted);
const observeNs = ((performance.now() - started) * 1e6) / CALLS;
if (sink === 0) throw new Error('unreachable');

await world.close();

const per = (t: Tally) => ({ ms: t.wallMs / t.addresses, cpu: t.cpuUs / t.addresses });
const base = arms[0]!;
const lines = [
  `Guard benchmark, ${new Date().toISOString()}, Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
  `${rounds} rounds per arm, interleaved; batch ${BATCH} addresses per round, single ${SINGLE}`,
  '',
  '| Arm | path | addresses | wall ms / address | CPU µs / address | ratio wall | ratio CPU |',
  '|---|---|---:|---:|---:|---:|---:|',
];
for (const arm of arms)
  for (const path of ['batch', 'single'] as const) {
    const t = arm[path];
    if (t.addresses === 0) continue;
    const mine = per(t);
    const theirs = per(base[path]);
    lines.push(
      `| ${arm.name} | ${path} | ${t.addresses} | ${mine.ms.toFixed(3)} | ${mine.cpu.toFixed(1)} | ${(mine.ms / theirs.ms).toFixed(3)} | ${(mine.cpu / theirs.cpu).toFixed(3)} |`,
    );
  }
lines.push(
  '',
  `usableEgresses over 3 egresses: ${usableNs.toFixed(1)} ns per call; observe of a 250 reply: ${observeNs.toFixed(1)} ns per call`,
);
process.stdout.write(`${lines.join('\n')}\n`);

/**
 * `npm run bench:provider-cap`: what the provider-wide cap and pace cost per verification
 * (docs/batch-engine.md, "Provider-wide politeness"). Two worlds in child processes
 * (bench/kit/bench-child.ts), the same list, hosts and latency: in one the MX hosts have names of
 * no provider (`mx<i>.mta.bench`), in the other a provider's (`mx<i>.mail.protection.outlook.com`,
 * Microsoft 365), so that every session also takes the provider's slot and pace. The cap and pace
 * are set where they do not bind (cap = hosts × per-host cap, 10,000 sessions/s), so the runs
 * differ only by the bookkeeping. Runs alternate (plain, provider, plain, provider...) and the
 * ratio is of the medians, in one run of the script. With `--redis-url URL` the same pairs run
 * again on a Redis coordination, where the provider adds two slot round trips per session (cap
 * and pace) and a release.
 *
 * Options: --addresses N --domains N --hosts N --latency MS --rounds N --redis-url URL --no-write
 */
import os from 'node:os';
import pino from 'pino';
import { batchEngineOptions, loadConfig } from '../src/config.js';
import type { EngineCoordination } from '../src/engine/coordination.js';
import { closeRedis, openRedis } from '../src/redis/connection.js';
import { createRedisCoordination } from '../src/redis/coordination.js';
import { buildList } from './kit/bench-list.js';
import type { BenchChild } from './kit/bench-child.js';
import { startBenchChild } from './kit/bench-child.js';
import { writeDocsBlock } from './kit/docs-block.js';
import type { EngineRun } from './kit/engine-run.js';
import { runEngine } from './kit/engine-run.js';
import type { BenchWorld, FakeMtaStats } from './fake-mta-pipelining.js';

const PER_HOST = 5;
const PROVIDER_SUFFIX = 'mail.protection.outlook.com';

interface Args {
  addresses: number;
  domains: number;
  hosts: number;
  latency: number;
  rounds: number;
  redisUrl: string | null;
  write: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    addresses: 10_000,
    domains: 200,
    hosts: 10,
    latency: 5,
    rounds: 3,
    redisUrl: null,
    write: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--no-write') args.write = false;
    else if (flag === '--redis-url') args.redisUrl = argv[++i] ?? null;
    else {
      const key = flag.slice(2) as keyof Args;
      const value = Number(argv[++i]);
      if (!(key in args) || !Number.isInteger(value) || value < 1) throw new Error(`bad option ${flag}`);
      (args as unknown as Record<string, number>)[key] = value;
    }
  }
  return args;
}

type Child = BenchChild<FakeMtaStats>;

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function measure(
  child: Child,
  emails: string[],
  args: Args,
  label: string,
  coordination: EngineCoordination | undefined,
): Promise<EngineRun & { peak: number }> {
  const config = loadConfig(
    {
      dnsServer: child.dns,
      smtpPort: String(child.port),
      concurrency: '200',
      perHostConcurrency: String(PER_HOST),
      providerConcurrency: String(args.hosts * PER_HOST),
      providerSessionRate: '1000',
      allowInternalTargets: 'true',
    },
    {},
  );
  child.reset();
  const run = await runEngine(
    emails,
    { ...batchEngineOptions(config, { timeoutMs: 5000 }), providerSessionsPerSecond: 10_000 },
    label,
    coordination ? { coordination } : {},
  );
  const stats = await child.stats();
  return { ...run, peak: stats.peakConcurrent };
}

interface Pair {
  cpuPlain: number;
  cpuProvider: number;
  ratePlain: number;
  rateProvider: number;
  peakPlain: number;
  peakProvider: number;
}

async function pairs(
  children: { plain: Child; provider: Child },
  emails: string[],
  args: Args,
  coordination: (() => EngineCoordination) | null,
): Promise<Pair> {
  const plain: (EngineRun & { peak: number })[] = [];
  const provider: (EngineRun & { peak: number })[] = [];
  for (let round = 0; round < args.rounds; round++) {
    plain.push(await measure(children.plain, emails, args, `plain ${round + 1}`, coordination?.()));
    provider.push(await measure(children.provider, emails, args, `provider ${round + 1}`, coordination?.()));
  }
  for (const run of [...plain, ...provider]) {
    const bad = Object.keys(run.statuses).filter((key) => key.startsWith('unknown'));
    if (bad.length > 0) throw new Error(`a run had unknown results: ${JSON.stringify(run.statuses)}`);
  }
  return {
    cpuPlain: median(plain.map((r) => r.cpuMsPerAddress)),
    cpuProvider: median(provider.map((r) => r.cpuMsPerAddress)),
    ratePlain: median(plain.map((r) => r.perSecond)),
    rateProvider: median(provider.map((r) => r.perSecond)),
    peakPlain: Math.max(...plain.map((r) => r.peak)),
    peakProvider: Math.max(...provider.map((r) => r.peak)),
  };
}

function describePair(label: string, p: Pair): string {
  return [
    `| ${label}, no provider | ${p.cpuPlain.toFixed(4)} | ${Math.round(p.ratePlain)} | ${p.peakPlain} |`,
    `| ${label}, provider cap and pace | ${p.cpuProvider.toFixed(4)} | ${Math.round(p.rateProvider)} | ${p.peakProvider} |`,
    `| ${label}, ratio provider ÷ none | **${(p.cpuProvider / p.cpuPlain).toFixed(3)}** | ${(p.rateProvider / p.ratePlain).toFixed(3)} | |`,
  ].join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const { emails, ...list } = buildList(args);
  const world: BenchWorld = { ...list, latencyMs: args.latency, hardErrorLimit: 20 };
  const script = new URL('./fake-mta-pipelining.ts', import.meta.url);
  const plain = await startBenchChild<FakeMtaStats>(script, world);
  const provider = await startBenchChild<FakeMtaStats>(script, { ...world, mxSuffix: PROVIDER_SUFFIX });
  const startedAt = new Date();
  const load = os.loadavg()[0]!.toFixed(1);
  const rows: string[] = [];
  try {
    // A first run warms the JIT and the sockets, so that neither world's first run pays for it.
    await measure(plain, emails, args, 'warm-up', undefined);
    await measure(provider, emails, args, 'warm-up', undefined);
    rows.push(describePair('in-process', await pairs({ plain, provider }, emails, args, null)));
    if (args.redisUrl !== null) {
      const client = await openRedis(args.redisUrl, { logger: pino({ level: 'warn' }) });
      try {
        let run = 0;
        const prefix = `bench-provider-cap:${process.pid}:`;
        const coordination = (): EngineCoordination =>
          createRedisCoordination(client, { keyPrefix: `${prefix}${run++}:` });
        rows.push(describePair('Redis', await pairs({ plain, provider }, emails, args, coordination)));
      } finally {
        await closeRedis(client);
      }
    }
  } finally {
    await plain.close();
    await provider.close();
  }
  const text = [
    `Measured ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, load average ${load} ` +
      `(${os.cpus().length} cores), \`npm run bench:provider-cap -- ${process.argv.slice(2).join(' ')}\`: ` +
      `${args.addresses} addresses over ${args.domains} domains on ${args.hosts} MX hosts, ${args.latency} ms per ` +
      `reply, per-host cap ${PER_HOST}, medians of ${args.rounds} alternating runs each after one warm-up run of each world.`,
    '',
    '| run | engine CPU ms/address | addresses/s | peak sessions, all hosts |',
    '|---|---:|---:|---:|',
    ...rows,
  ].join('\n');
  console.log(text);
  if (args.write) await writeDocsBlock('provider-cap', text);
}

await main();

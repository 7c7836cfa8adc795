/**
 * `npm run bench:batch`, part 2: the batch engine's probing speed against fake MTAs and a fake
 * DNS server in a child process, 20 ms added to every SMTP reply and every DNS answer.
 *
 * World: 1,000 domains over 20 MX hosts (127.0.1.1-127.0.1.20, 50 domains each, the way real
 * domains crowd onto a few providers' MX hosts), 100 addresses per domain, 10% of them unknown
 * mailboxes (550 5.1.1), 5% of the domains catch-all; the list is shuffled. Per-host cap 5,
 * global cap 200. The pooled engine verifies the whole list, then the per-address baseline (one
 * connection and full dialogue per address, same caps) the same list; about two minutes on a
 * 2-core machine. `--baseline N` runs the baseline on the first N addresses only.
 *
 * Options: --addresses N --domains N --hosts N --latency MS --baseline N --no-write
 *
 * `--mta postfix` runs part 2b instead (bench/kit/postfix-run.ts): MX hosts that keep Postfix's
 * rules for a prober (in_flow_delay, error limits, connection limit) and the engine as a fraction
 * of the throughput those rules allow. Its options: --addresses N --domains N --hosts N
 * --latency MS --egress N[,N...] --max-rejects N --recipients-per-transaction N --recipients-per-session N
 * --no-write (defaults: 4 hosts, 10,000 addresses per host and egress address, 100 per domain,
 * runs with 1 and with 4 egress addresses).
 */
import os from 'node:os';
import { batchEngineOptions, loadConfig } from '../src/config.js';
import { buildList } from './kit/bench-list.js';
import type { BenchChild } from './kit/bench-child.js';
import { startBenchChild } from './kit/bench-child.js';
import { writeDocsBlock } from './kit/docs-block.js';
import type { EngineRun } from './kit/engine-run.js';
import { runEngine } from './kit/engine-run.js';
import type { PostfixArgs } from './kit/postfix-run.js';
import { POSTFIX_ARG_DEFAULTS, runPostfixBench } from './kit/postfix-run.js';
import type { BenchWorld, FakeMtaStats } from './fake-mta-pipelining.js';

interface Args {
  addresses: number;
  domains: number;
  hosts: number;
  latency: number;
  baseline: number;
  write: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    addresses: 100_000,
    domains: 1_000,
    hosts: 20,
    latency: 20,
    baseline: Infinity,
    write: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--no-write') args.write = false;
    else if (flag.startsWith('--')) {
      const key = flag.slice(2) as keyof Args;
      const value = Number(argv[++i]);
      if (!(key in args) || !Number.isInteger(value) || value < 0) throw new Error(`bad option ${flag}`);
      (args as unknown as Record<string, number>)[key] = value;
    }
  }
  return args;
}

const POSTFIX_FLAGS: Record<string, keyof PostfixArgs> = {
  '--addresses': 'addresses',
  '--domains': 'domains',
  '--hosts': 'hosts',
  '--latency': 'latency',
  '--max-rejects': 'maxRejects',
  '--recipients-per-transaction': 'recipientsPerTransaction',
  '--recipients-per-session': 'recipientsPerSession',
};

function parsePostfixArgs(argv: string[]): PostfixArgs {
  const args: PostfixArgs = { ...POSTFIX_ARG_DEFAULTS };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--no-write') args.write = false;
    else if (flag === '--egress') {
      // A comma list of egress address counts, one run each: "1,4" (the default), "4".
      const counts = (argv[++i] ?? '').split(',').map(Number);
      if (counts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 1 || n > 250))
        throw new Error('bad option --egress (egress address counts, e.g. 1,4)');
      args.egress = counts;
    } else {
      const key = POSTFIX_FLAGS[flag];
      const value = Number(argv[++i]);
      if (key === undefined || !Number.isInteger(value) || value < 1) throw new Error(`bad option ${flag}`);
      (args as unknown as Record<string, number>)[key] = value;
    }
  }
  return args;
}

function buildWorld(args: Args): { world: BenchWorld; emails: string[] } {
  const { emails, ...list } = buildList(args);
  return { world: { ...list, latencyMs: args.latency, hardErrorLimit: 20 }, emails };
}

type Child = BenchChild<FakeMtaStats>;

interface Measure extends EngineRun {
  server: FakeMtaStats;
}

async function measure(child: Child, emails: string[], mode: 'pooled' | 'per-address'): Promise<Measure> {
  const config = loadConfig(
    {
      dnsServer: child.dns,
      smtpPort: String(child.port),
      concurrency: '200',
      perHostConcurrency: '5',
      allowInternalTargets: 'true',
    },
    {},
  );
  child.reset();
  const run = await runEngine(emails, batchEngineOptions(config, { timeoutMs: 5000, mode }), mode);
  return { ...run, server: await child.stats() };
}

function describe(label: string, m: Measure): string {
  const s = m.server;
  return [
    `${label}: ${m.addresses} addresses in ${m.seconds.toFixed(1)} s = ${Math.round(m.perSecond)} addresses/s`,
    `  engine CPU ${m.cpuMsPerAddress.toFixed(3)} ms/address; server saw ${s.connections} connections, ` +
      `${s.mailFroms} MAIL FROM, ${s.rsets} RSET, ${s.rcpts} RCPT in ${s.rcptReads} reads (max ${s.maxRcptsPerRead}/read), ` +
      `peak ${Math.max(0, ...Object.values(s.peakConcurrentByHost))} sessions per host, ${s.peakConcurrent} in all, ` +
      `max ${s.maxErrorsPerSession} rejected RCPTs per session, ${s.errorLimitDisconnects} error-limit disconnects`,
    `  results: ${JSON.stringify(m.statuses)}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const mta = argv.indexOf('--mta');
  if (mta !== -1) {
    const kind = argv[mta + 1];
    argv.splice(mta, 2);
    if (kind === 'postfix') return runPostfixBench(parsePostfixArgs(argv));
    if (kind !== 'instant') throw new Error(`--mta ${kind}: instant (default) or postfix`);
  }
  const args = parseArgs(argv);
  const { world, emails } = buildWorld(args);
  const loadBefore = os.loadavg()[0]!.toFixed(1);
  const child = await startBenchChild<FakeMtaStats>(
    new URL('./fake-mta-pipelining.ts', import.meta.url),
    world,
  );
  try {
    console.log(
      `batch probing: ${emails.length} addresses, ${args.domains} domains over ${args.hosts} MX hosts, ` +
        `${args.latency} ms per SMTP reply and DNS answer, per-host cap 5, global cap 200`,
    );
    const pooled = await measure(child, emails, 'pooled');
    console.log(describe('pooled', pooled));
    const subset = emails.slice(0, Math.min(args.baseline, emails.length));
    const baseline = await measure(child, subset, 'per-address');
    console.log(describe('per-address baseline', baseline));
    const gain = pooled.perSecond / baseline.perSecond;
    console.log(`gain: ${gain.toFixed(1)}x (targets: >= 2000 addresses/s and >= 5x the baseline)`);

    if (args.write) {
      const cpus = os.cpus();
      const text = [
        '### Probing (`bench/batch-probe.bench.ts`)',
        '',
        `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC with \`npm run bench:batch\` ` +
          `(\`node --import tsx bench/batch-probe.bench.ts\`), Node.js ${process.version}, ` +
          `${cpus.length} × ${cpus[0]?.model.trim() ?? 'CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; the machine ` +
          `was shared with other work (load average ${loadBefore} before the run, ${os.loadavg()[0]!.toFixed(1)} after), so figures are a floor.`,
        '',
        `Fake MTAs (the PIPELINING responder of \`test/kit/pipelining-mta.ts\`, on the kit's raw SMTP server) and the fake ` +
          `DNS server run in a child process; ${args.latency} ms is added to every SMTP reply and every DNS answer. ` +
          `${emails.length.toLocaleString('en')} addresses over ${args.domains.toLocaleString('en')} domains, ` +
          `the domains spread over ${args.hosts} MX hosts (127.0.1.x); 10% unknown mailboxes, 5% catch-all domains; ` +
          'per-host cap 5, global cap 200, defaults otherwise.',
        '',
        '| mode | addresses | time | addresses/s | engine CPU per address | connections | RCPTs per read (max) |',
        '|---|---|---|---|---|---|---|',
        row('pooled (default)', pooled),
        row('per-address baseline', baseline),
        '',
        `Gain: **${gain.toFixed(1)}×** (targets: ≥ 2,000 addresses/s and ≥ 5× the baseline); the fake MTAs saw at ` +
          `most ${peakPerHost(pooled)} sessions per host and ${pooled.server.maxErrorsPerSession} refused RCPTs per ` +
          `session in pooled mode (${pooled.server.errorLimitDisconnects} error-limit disconnects).` +
          (baseline.addresses < pooled.addresses
            ? ` The baseline ran on the first ${baseline.addresses.toLocaleString('en')} addresses of the same ` +
              'shuffled list, to keep the run short; its rate does not depend on the list length.'
            : ''),
        '',
        `Why: a per-address probe costs four round trips (banner, EHLO, MAIL FROM, RCPT; QUIT is not awaited), ` +
          `${4 * args.latency} ms here, and the caps allow ${Math.min(200, args.hosts * 5)} sessions at once ` +
          `(${args.hosts} hosts × 5), so the baseline cannot pass ${Math.round((Math.min(200, args.hosts * 5) * 1000) / (4 * args.latency)).toLocaleString('en')} ` +
          'addresses/s however fast the machine. Pooled sessions pay the connection once per few hundred ' +
          'recipients and carry up to 8 RCPTs per round trip, so they are bound by CPU instead (the engine and ' +
          'the fake MTAs share two cores).',
      ].join('\n');
      await writeDocsBlock('batch-probe', text);
      console.log('docs/benchmarks.md updated (Batch > Probing)');
    }
  } finally {
    await child.close();
  }
}

function peakPerHost(m: Measure): number {
  return Math.max(0, ...Object.values(m.server.peakConcurrentByHost));
}

function row(label: string, m: Measure): string {
  const s = m.server;
  const perRead = s.rcptReads === 0 ? 0 : s.rcpts / s.rcptReads;
  return (
    `| ${label} | ${m.addresses.toLocaleString('en')} | ${m.seconds.toFixed(1)} s | **${Math.round(m.perSecond).toLocaleString('en')}** | ` +
    `${m.cpuMsPerAddress.toFixed(3)} ms | ${s.connections.toLocaleString('en')} | ${perRead.toFixed(1)} (${s.maxRcptsPerRead}) |`
  );
}

// A bench must end: give up loudly rather than hang if something never settles.
const watchdog = setTimeout(() => {
  console.error('batch-probe bench: no result after 10 minutes, giving up');
  process.exit(1);
}, 10 * 60_000);
watchdog.unref();
await main();

/**
 * `npm run bench:batch`, part 2b (`bench/batch-probe.bench.ts --mta postfix`): the batch engine
 * against MX hosts that keep Postfix's rules for a prober (test/kit/postfix-like-mta.ts:
 * in_flow_delay, the soft and hard error limits, the per-client connection limit), as a fraction
 * of the throughput those rules and the per-host cap allow (test/kit/throughput-bound.ts).
 *
 * Runs the engine with its defaults once per egress count of `--egress` (default 1 and 4: that
 * many source addresses 127.0.0.2, 127.0.0.3..., each with its own per-host cap, so the bound
 * multiplies), on a list of 10,000 addresses per host and egress address, so that each run lasts
 * about as long; `--max-rejects`, `--recipients-per-transaction` and `--recipients-per-session`
 * add a run with those settings. Prints the settings, the bound with its formula, the measured
 * rates and their fraction of the bound, the ratio of the largest egress count's rate to the
 * single address's, and the most sessions any host and any (host, client address) saw, which
 * must stay within the caps.
 */
import os from 'node:os';
import { batchEngineOptions, loadConfig } from '../../src/config.js';
import { BATCH_DEFAULTS } from '../../src/engine/batch/batch-engine.js';
import type { PostfixLikeStats, PostfixRules } from '../../test/kit/postfix-like-mta.js';
import { POSTFIX_DEFAULTS } from '../../test/kit/postfix-like-mta.js';
import { buildList, hostWork } from './bench-list.js';
import type { BenchChild } from './bench-child.js';
import { startBenchChild } from './bench-child.js';
import { writeDocsBlock } from './docs-block.js';
import type { EngineRun } from './engine-run.js';
import { runEngine } from './engine-run.js';
import type { PostfixWorld } from './postfix-like-child.js';
import type {
  Bound,
  ClientLimits,
  HostWork,
  ServerRules,
  SessionPolicy,
} from '../../test/kit/throughput-bound.js';
import { policyRate, throughputBound } from '../../test/kit/throughput-bound.js';

export interface PostfixArgs {
  /** Default: 10,000 per host and egress address. */
  addresses: number | null;
  /** Default: 100 addresses per domain. */
  domains: number | null;
  hosts: number;
  latency: number;
  /** Egress address counts, one run each (default 1 and 4). */
  egress: number[];
  write: boolean;
  /** Tuned run's settings; null: derived from the rules. */
  maxRejects: number | null;
  recipientsPerTransaction: number | null;
  recipientsPerSession: number | null;
}

export const POSTFIX_ARG_DEFAULTS: PostfixArgs = {
  addresses: null,
  domains: null,
  hosts: 4,
  latency: 20,
  egress: [1, 4],
  write: true,
  maxRejects: null,
  recipientsPerTransaction: null,
  recipientsPerSession: null,
};

const PER_HOST_CONCURRENCY = 5;
const GLOBAL_CONCURRENCY = 200;

interface Configuration {
  label: string;
  tuning: Partial<SessionPolicy>;
}

interface Measured {
  configuration: Configuration;
  policy: SessionPolicy;
  ceiling: Bound;
  run: EngineRun;
  server: PostfixLikeStats;
}

/** One egress count's list, bound and runs. */
interface EgressRun {
  egress: number;
  work: HostWork[];
  bound: Bound;
  measured: Measured[];
}

export async function runPostfixBench(args: PostfixArgs): Promise<void> {
  const rules: PostfixRules = { ...POSTFIX_DEFAULTS };
  const serverRules: ServerRules = { ...rules, latencyMs: args.latency };
  const loadBefore = os.loadavg()[0]!;
  const runs: EgressRun[] = [];
  for (const egress of args.egress) runs.push(await runWithEgress(args, egress, rules, serverRules));
  const summary = summaryLines(runs);
  console.log('');
  for (const line of summary) console.log(line);
  if (runs.some((r) => r.measured.some((m) => !withinCaps(m.server, rules)))) {
    console.error('a host saw more sessions than the caps allow, or the rules slowed or dropped the client');
    process.exitCode = 1;
  }
  if (args.write) {
    await writeDocsBlock('batch-postfix', docsText(args, runs, rules, serverRules, loadBefore, summary));
    console.log('docs/benchmarks.md updated (Batch > Batch engine against a Postfix-like MTA)');
  }
}

/** The source addresses of `egress` egresses: 127.0.0.2, 127.0.0.3... (all of 127/8 is loopback). */
function sourceAddresses(egress: number): string[] {
  return Array.from({ length: egress }, (_, i) => `127.0.0.${i + 2}`);
}

async function runWithEgress(
  args: PostfixArgs,
  egress: number,
  rules: PostfixRules,
  serverRules: ServerRules,
): Promise<EgressRun> {
  const addresses = args.addresses ?? 10_000 * args.hosts * egress;
  const list = buildList({
    addresses,
    domains: args.domains ?? Math.ceil(addresses / 100),
    hosts: args.hosts,
    spreadCatchAll: true,
  });
  const work = hostWork(list);
  const limits: ClientLimits = {
    perHostConcurrency: PER_HOST_CONCURRENCY,
    globalConcurrency: GLOBAL_CONCURRENCY,
    egress,
    clientConnectionLimit: rules.clientConnectionLimit,
  };
  const bound = throughputBound(work, limits, serverRules);
  const configurations: Configuration[] = [{ label: 'engine defaults', tuning: {} }];
  if (
    args.maxRejects !== null ||
    args.recipientsPerTransaction !== null ||
    args.recipientsPerSession !== null
  ) {
    configurations.push({
      label: 'with the given settings',
      tuning: {
        ...(args.maxRejects === null ? {} : { maxRejectsPerSession: args.maxRejects }),
        ...(args.recipientsPerTransaction === null
          ? {}
          : { recipientsPerTransaction: args.recipientsPerTransaction }),
        ...(args.recipientsPerSession === null ? {} : { recipientsPerSession: args.recipientsPerSession }),
      },
    });
  }

  const childWorld: PostfixWorld = {
    hosts: list.hosts,
    latencyMs: args.latency,
    domains: list.domains,
    catchAllDomains: list.catchAllDomains,
    rules,
  };
  const child = await startBenchChild<PostfixLikeStats>(
    new URL('./postfix-like-child.ts', import.meta.url),
    childWorld,
  );
  const say = (line: string): void => console.log(line);
  const measured: Measured[] = [];
  try {
    say(
      `batch probing against a Postfix-like MTA: ${list.emails.length} addresses, ` +
        `${Object.keys(list.domains).length} domains over ${args.hosts} MX hosts, ${args.latency} ms per SMTP reply ` +
        `and DNS answer, ${egress} egress address(es) (${sourceAddresses(egress).join(', ')}), ` +
        `per-host cap ${PER_HOST_CONCURRENCY} per egress, global cap ${GLOBAL_CONCURRENCY}`,
    );
    say(`  rules: ${describeRules(rules)}`);
    say(`  work: ${describeWork(work)}`);
    for (const line of describeBound(bound, serverRules)) say(`  ${line}`);
    for (const configuration of configurations) {
      const policy = policyOf(configuration.tuning);
      const ceiling = policyRate(work, limits, serverRules, policy);
      const options = {
        ...batchEngineOptions(engineConfig(child, egress), { timeoutMs: 5000 }),
        ...configuration.tuning,
      };
      child.reset();
      const run = await runEngine(list.emails, options, `${configuration.label}, ${egress} egress`);
      const server = await child.stats();
      measured.push({ configuration, policy, ceiling, run, server });
      for (const line of describeRun(measured.at(-1)!, bound, rules)) say(`  ${line}`);
    }
  } finally {
    await child.close();
  }
  return { egress, work, bound, measured };
}

/** Each egress count's defaults run against its bound, and the largest count's rate against one address's. */
function summaryLines(runs: EgressRun[]): string[] {
  const lines = runs.map((r) => {
    const m = r.measured[0]!;
    const bound = r.bound.addressesPerSecond;
    return (
      `egress ${r.egress}: ${Math.round(m.run.perSecond).toLocaleString('en')} addresses/s = ` +
      `${percent(m.run.perSecond / bound)} of the bound ${Math.round(bound).toLocaleString('en')} ` +
      `(steady ${percent(m.run.steadyPerSecond / bound)}); max ${peakPerClient(m.server)} sessions per (client address, host)`
    );
  });
  const single = runs.find((r) => r.egress === 1);
  const most = runs.reduce<EgressRun | undefined>(
    (a, r) => (a === undefined || r.egress > a.egress ? r : a),
    undefined,
  );
  if (single !== undefined && most !== undefined && most.egress > 1) {
    const ratio = most.measured[0]!.run.perSecond / single.measured[0]!.run.perSecond;
    const steady = most.measured[0]!.run.steadyPerSecond / single.measured[0]!.run.steadyPerSecond;
    lines.push(
      `${most.egress} egress addresses vs 1, same machine, same run: ${ratio.toFixed(2)}× (steady ${steady.toFixed(2)}×; ` +
        `the bound ${(most.bound.addressesPerSecond / single.bound.addressesPerSecond).toFixed(2)}×)`,
    );
  }
  return lines;
}

function engineConfig(child: BenchChild<PostfixLikeStats>, egress: number): ReturnType<typeof loadConfig> {
  return loadConfig(
    {
      sourceAddress: sourceAddresses(egress),
      dnsServer: child.dns,
      smtpPort: String(child.port),
      concurrency: String(GLOBAL_CONCURRENCY),
      perHostConcurrency: String(PER_HOST_CONCURRENCY),
      allowInternalTargets: 'true',
    },
    {},
  );
}

function policyOf(tuning: Partial<SessionPolicy>): SessionPolicy {
  return {
    maxRejectsPerSession: tuning.maxRejectsPerSession ?? BATCH_DEFAULTS.maxRejectsPerSession,
    pipelineDepth: tuning.pipelineDepth ?? BATCH_DEFAULTS.pipelineDepth,
    recipientsPerSession: tuning.recipientsPerSession ?? BATCH_DEFAULTS.recipientsPerSession,
    recipientsPerTransaction: tuning.recipientsPerTransaction ?? BATCH_DEFAULTS.recipientsPerTransaction,
  };
}

/** Whether the client stayed within every cap and was never slowed down or dropped. */
function withinCaps(server: PostfixLikeStats, rules: PostfixRules): boolean {
  const perClient = Math.min(PER_HOST_CONCURRENCY, rules.clientConnectionLimit);
  return (
    peakPerClient(server) <= perClient &&
    server.errorSleeps === 0 &&
    server.errorLimitDisconnects === 0 &&
    server.connectionLimitRefusals === 0
  );
}

function peakPerHost(server: PostfixLikeStats): number {
  return Math.max(0, ...Object.values(server.peakConcurrentByHost));
}

function peakPerClient(server: PostfixLikeStats): number {
  return Math.max(
    0,
    ...Object.values(server.peakConcurrentByClient).flatMap((byClient) => Object.values(byClient)),
  );
}

function describeRules(rules: PostfixRules): string {
  return (
    `in_flow_delay ${rules.inFlowDelayMs} ms (in-flow tokens spent), smtpd_soft_error_limit ${rules.softErrorLimit} ` +
    `with smtpd_error_sleep_time ${rules.errorSleepMs} ms, smtpd_hard_error_limit ${rules.hardErrorLimit}, ` +
    `smtpd_client_connection_count_limit ${rules.clientConnectionLimit}, smtpd_recipient_limit ${rules.recipientLimit}`
  );
}

function describePolicy(policy: SessionPolicy): string {
  return (
    `maxRejectsPerSession ${policy.maxRejectsPerSession}, recipientsPerTransaction ${policy.recipientsPerTransaction}, ` +
    `recipientsPerSession ${policy.recipientsPerSession}, pipelineDepth ${policy.pipelineDepth}`
  );
}

function describeWork(work: HostWork[]): string {
  const rcpts = work.reduce((sum, h) => sum + h.rcpts, 0);
  const addresses = work.reduce((sum, h) => sum + h.addresses, 0);
  const shares = work.map((h) => h.refused);
  const low = percent(Math.min(...shares));
  const high = percent(Math.max(...shares));
  return (
    `${rcpts.toLocaleString('en')} RCPTs (${addresses.toLocaleString('en')} addresses + one catch-all probe per domain), ` +
    `${low === high ? low : `${low}-${high}`} of them refused at each host`
  );
}

/** The bound's formula with the slowest host's figures. */
function describeBound(bound: Bound, rules: ServerRules): string[] {
  const h = bound.slowest;
  const s = h.session;
  const addresses = bound.hosts.reduce((sum, x) => sum + x.host.addresses, 0);
  return [
    'bound = sessions per host × recipients per session ÷ session time, at each host; the list takes as long as its slowest host',
    `      = ${bound.sessionsPerHost} × ${s.rcpts.toFixed(1)} RCPTs (reject budget ${h.rejectBudget} ÷ ` +
      `${percent(h.host.refused)} refused) ÷ ${Math.round(s.timeMs)} ms ((3 + ${(s.roundTrips - 3).toFixed(1)} RCPT round trips) ` +
      `× ${rules.latencyMs} ms + ${s.transactions.toFixed(2)} transaction × ${rules.inFlowDelayMs} ms in_flow_delay) ` +
      `= ${Math.round(h.rcptsPerSecond)} RCPTs/s at ${h.host.host}`,
    `      → ${h.host.rcpts.toLocaleString('en')} RCPTs there in ${h.seconds.toFixed(1)} s; ${addresses.toLocaleString('en')} addresses ` +
      `÷ ${h.seconds.toFixed(1)} s = ${Math.round(bound.addressesPerSecond).toLocaleString('en')} addresses/s`,
  ];
}

function describeRun(m: Measured, bound: Bound, rules: PostfixRules): string[] {
  const { run, server, ceiling } = m;
  const sessions = Object.values(server.sessionsByHost).reduce((a, b) => a + b, 0);
  const fraction = (rate: number): string => percent(rate / bound.addressesPerSecond);
  return [
    `${m.configuration.label} (${describePolicy(m.policy)}): their own ceiling ` +
      `${Math.round(ceiling.addressesPerSecond).toLocaleString('en')} addresses/s (${fraction(ceiling.addressesPerSecond)} of the bound)`,
    `  measured: ${run.addresses} addresses in ${run.seconds.toFixed(1)} s = ${Math.round(run.perSecond)} addresses/s ` +
      `(${fraction(run.perSecond)} of the bound); steady (10%-90% settled) ${Math.round(run.steadyPerSecond)} addresses/s ` +
      `(${fraction(run.steadyPerSecond)}); engine CPU ${run.cpuMsPerAddress.toFixed(3)} ms/address`,
    `  server: ${sessions} sessions, ${(server.rcpts / Math.max(1, sessions)).toFixed(1)} RCPTs and ` +
      `${(server.transactions / Math.max(1, sessions)).toFixed(2)} transactions per session, ${server.inFlowPauses} in_flow pauses; ` +
      `peak ${peakPerHost(server)} sessions per host (cap ${PER_HOST_CONCURRENCY} per egress), ` +
      `${peakPerClient(server)} per (host, client address) (cap ${Math.min(PER_HOST_CONCURRENCY, rules.clientConnectionLimit)}); ` +
      `max ${server.maxErrorsPerSession} errors in a session, ${server.errorSleeps} error sleeps, ` +
      `${server.errorLimitDisconnects} error-limit disconnects, ${server.connectionLimitRefusals} connection-limit refusals`,
    `  time: ${describeTime(m, bound.sessionsPerHost)}`,
    `  results: ${JSON.stringify(run.statuses)}`,
  ];
}

/**
 * Where the sessions' time went, seen from the server: whether the engine kept every slot busy
 * (occupancy), and how much longer than modelled a session lasted because the machine was slow
 * (timers of the MTA firing late, the engine's turnaround after each reply).
 */
function describeTime(m: Measured, sessionsPerHost: number): string {
  const { server, run, ceiling } = m;
  const hosts = Object.keys(server.sessionsByHost).length;
  const slotMs = run.seconds * 1000 * Math.max(1, hosts) * sessionsPerHost;
  const mean = server.sessionMs / Math.max(1, server.endedSessions);
  return (
    `slots busy ${percent(server.sessionMs / slotMs)} of the run; a session lasted ${Math.round(mean)} ms on average ` +
    `(model ${Math.round(ceiling.slowest.session.timeMs)} ms for ${ceiling.slowest.session.rcpts.toFixed(1)} RCPTs, ` +
    `measured ${(server.rcpts / Math.max(1, server.endedSessions)).toFixed(1)}); per round trip the engine took ` +
    `${(server.turnaroundMs / Math.max(1, server.turnarounds)).toFixed(1)} ms to answer and the MTA's timers fired ` +
    `${(server.lateMs / Math.max(1, server.writes)).toFixed(1)} ms late`
  );
}

function docsText(
  args: PostfixArgs,
  runs: EgressRun[],
  rules: PostfixRules,
  serverRules: ServerRules,
  loadBefore: number,
  summary: string[],
): string {
  const cpus = os.cpus();
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const command =
    'node --import tsx bench/batch-probe.bench.ts --mta postfix' +
    (args.egress.join(',') !== POSTFIX_ARG_DEFAULTS.egress.join(',')
      ? ` --egress ${args.egress.join(',')}`
      : '') +
    (args.maxRejects !== null ? ` --max-rejects ${args.maxRejects}` : '') +
    (args.recipientsPerTransaction !== null
      ? ` --recipients-per-transaction ${args.recipientsPerTransaction}`
      : '') +
    (args.recipientsPerSession !== null ? ` --recipients-per-session ${args.recipientsPerSession}` : '');
  const first = runs[0]!;
  const rows = runs.flatMap((r) =>
    r.measured.map((m) => {
      const f = (rate: number): string => percent(rate / r.bound.addressesPerSecond);
      const sessions = Object.values(m.server.sessionsByHost).reduce((a, b) => a + b, 0);
      return (
        `| ${r.egress} | ${m.run.addresses.toLocaleString('en')} | ${m.configuration.label} | ${m.policy.maxRejectsPerSession} / ${m.policy.recipientsPerTransaction} / ` +
        `${m.policy.recipientsPerSession} | ${Math.round(r.bound.addressesPerSecond).toLocaleString('en')} | ` +
        `${Math.round(m.ceiling.addressesPerSecond).toLocaleString('en')} (${f(m.ceiling.addressesPerSecond)}) | ` +
        `**${Math.round(m.run.perSecond).toLocaleString('en')} (${f(m.run.perSecond)})** | ` +
        `${Math.round(m.run.steadyPerSecond).toLocaleString('en')} (${f(m.run.steadyPerSecond)}) | ${sessions.toLocaleString('en')} | ` +
        `${(m.server.transactions / Math.max(1, sessions)).toFixed(2)} | ${peakPerHost(m.server)} / ${peakPerClient(m.server)} | ` +
        `${m.server.maxErrorsPerSession} | ${m.server.errorSleeps} / ${m.server.errorLimitDisconnects} / ${m.server.connectionLimitRefusals} |`
      );
    }),
  );
  return [
    `### Batch engine against a Postfix-like MTA (${when.slice(0, 10)})`,
    '',
    `Measured ${when} UTC with \`${command}\` (part of \`npm run bench:batch\`), Node.js ${process.version}, ` +
      `${cpus.length} × ${cpus[0]?.model.trim() ?? 'CPU'}; load average ${loadBefore.toFixed(1)} before the runs, ` +
      `${os.loadavg()[0]!.toFixed(1)} after (the machine was shared with other work).`,
    '',
    `The MX hosts keep Postfix's rules for a prober (\`test/kit/postfix-like-mta.ts\`, in a child process): ` +
      `${describeRules(rules)}; ${serverRules.latencyMs} ms is added to every SMTP reply and DNS answer. ` +
      `10,000 addresses per MX host and egress address over ${first.work.length} MX hosts (100 per domain, 10% unknown ` +
      `mailboxes, 5% catch-all domains spread over the hosts, shuffled): ${describeWork(first.work)} ` +
      `(with one egress address). Egress addresses are source addresses 127.0.0.2, 127.0.0.3...; ` +
      `per-host cap ${PER_HOST_CONCURRENCY} per (egress, host), global cap ${GLOBAL_CONCURRENCY}.`,
    '',
    'The bound (`test/kit/throughput-bound.ts`, [batch-engine.md](batch-engine.md#the-throughput-bound-against-postfix)), ' +
      'for a client that is never slowed down or dropped, with each egress count (sessions per host = cap × egress addresses):',
    '',
    '```',
    ...runs.flatMap((r) => [`${r.egress} egress address(es):`, ...describeBound(r.bound, serverRules)]),
    '```',
    '',
    'Summary:',
    '',
    '```',
    ...summary,
    '```',
    '',
    '"Own ceiling" is the same computation with the run\'s settings; "steady" is the rate between 10% and 90% ' +
      'of the addresses settled (without the start and the tail).',
    '',
    '| egress addresses | addresses | run | reject budget / RCPTs per transaction / per session | bound, addresses/s | own ceiling (of the bound) | measured, whole run | steady (10%-90%) | sessions | transactions per session | peak sessions per host / per (host, client) | max errors in a session | error sleeps / error-limit drops / connection refusals |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Where the time went, seen from the MTA:',
    '',
    ...runs.flatMap((r) =>
      r.measured.map(
        (m) => `- ${r.egress} egress, ${m.configuration.label}: ${describeTime(m, r.bound.sessionsPerHost)}.`,
      ),
    ),
  ].join('\n');
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

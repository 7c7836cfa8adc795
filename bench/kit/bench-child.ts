/**
 * Fake mail hosts and DNS server in a child process, so that their CPU time is not the engine's.
 * The child (bench/fake-mta-pipelining.ts, bench/kit/postfix-like-child.ts) takes its world as
 * JSON in argv[2], sends `{ready: {port, dns}}` once listening, answers 'stats' with `{stats}`,
 * and obeys 'reset' and 'close': `startBenchChild` is the parent's side, `serveBenchChild` the
 * child's.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startDnsServer } from '../../test/kit/dns-server.js';

export interface BenchChild<Stats> {
  port: number;
  /** "127.0.0.1:PORT" of the fake DNS server. */
  dns: string;
  stats(): Promise<Stats>;
  reset(): void;
  close(): Promise<void>;
}

export async function startBenchChild<Stats>(script: URL, world: unknown): Promise<BenchChild<Stats>> {
  const child = fork(fileURLToPath(script), [JSON.stringify(world)], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  });
  const ready = await new Promise<{ port: number; dns: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench child exited with ${code}`)));
    child.on('message', (message: { ready?: { port: number; dns: string } }) => {
      if (message.ready) resolve(message.ready);
    });
  });
  return {
    ...ready,
    stats: () =>
      new Promise((resolve) => {
        const onMessage = (message: { stats?: Stats }): void => {
          if (!message.stats) return;
          child.off('message', onMessage);
          resolve(message.stats);
        };
        child.on('message', onMessage);
        child.send('stats');
      }),
    reset: () => child.send('reset'),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('close');
      await exited;
    },
  };
}

/** What a child serves: its mail hosts, as the kit's MTAs are. */
export interface BenchMta {
  port: number;
  stats(): unknown;
  resetStats(): void;
  close(): Promise<void>;
}

/** The world's MX hosts as the child's DNS server names them. */
export interface BenchDnsWorld {
  hosts: string[];
  latencyMs: number;
  /** domain -> index into `hosts` of its MX. */
  domains: Record<string, number>;
  /** The DNS suffix of the MX host names (default `mta.bench`; a provider's to look like one). */
  mxSuffix?: string;
}

/**
 * The child's side: names every host of `world` (mx<i>.mta.bench, or under `mxSuffix`) and each domain's MX in a fake
 * DNS server answering after `latencyMs`, then speaks the protocol above for `mta`; closes both
 * when its parent asks or goes away.
 */
export async function serveBenchChild(world: BenchDnsWorld, mta: BenchMta): Promise<void> {
  const dns = await startDnsServer();
  const suffix = world.mxSuffix ?? 'mta.bench';
  world.hosts.forEach((ip, i) => dns.setDomain(`mx${i}.${suffix}`, { a: [ip] }));
  for (const [domain, hostIndex] of Object.entries(world.domains)) {
    dns.setDomain(domain, { mx: [{ exchange: `mx${hostIndex}.${suffix}`, priority: 10 }] });
  }
  dns.setDelay(world.latencyMs);
  let closing: Promise<unknown> | null = null;
  const close = (): Promise<unknown> => (closing ??= Promise.all([mta.close(), dns.close()]));
  process.on('message', (message: unknown) => {
    if (message === 'stats') process.send?.({ stats: mta.stats() });
    if (message === 'reset') mta.resetStats();
    if (message === 'close') void close().then(() => process.disconnect());
  });
  process.on('disconnect', () => void close());
  process.send?.({ ready: { port: mta.port, dns: dns.address } });
}

/**
 * The batch probing benchmark's mail hosts and DNS server in a child process (bench/kit/
 * bench-child.ts), so that their CPU time is not the engine's: the pipelining MTA of
 * test/kit/pipelining-mta.ts on every host of the world, and test/kit/dns-server.ts naming them.
 */
import { fileURLToPath } from 'node:url';
import { startFakeMta } from '../test/kit/pipelining-mta.js';
import { serveBenchChild } from './kit/bench-child.js';

export type { FakeMtaStats } from '../test/kit/pipelining-mta.js';

/** What the benchmark asks the child process to serve. */
export interface BenchWorld {
  hosts: string[];
  latencyMs: number;
  /** domain -> index into `hosts` of its MX. */
  domains: Record<string, number>;
  /** Domains that accept every recipient. */
  catchAllDomains: string[];
  hardErrorLimit: number;
}

/** The bench's mailbox rule: mailboxes are the local parts starting with "user". */
export function benchRcptRule(catchAll: ReadonlySet<string>): (address: string) => string {
  return (address) => {
    const at = address.lastIndexOf('@');
    if (address.startsWith('user') || catchAll.has(address.slice(at + 1).toLowerCase()))
      return '250 2.1.5 OK';
    return `550 5.1.1 <${address}>: Recipient address rejected: User unknown`;
  };
}

async function runChild(): Promise<void> {
  const world = JSON.parse(process.argv[2] ?? '{}') as BenchWorld;
  const catchAll = new Set(world.catchAllDomains);
  const mta = await startFakeMta({
    hosts: world.hosts,
    latencyMs: world.latencyMs,
    rcpt: benchRcptRule(catchAll),
    hardErrorLimit: world.hardErrorLimit,
  });
  // The tables are the benchmark's; the sessions' command logs are not kept (no `record`).
  await serveBenchChild(world, { ...mta, stats: () => ({ ...mta.stats(), sessions: [] }) });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runChild();
}

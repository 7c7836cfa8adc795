/**
 * The batch probing benchmark's mail hosts and DNS server in a child process (bench/kit/
 * bench-child.ts), so that their CPU time is not the engine's: the pipelining MTA of
 * test/kit/pipelining-mta.ts on every host of the world, and test/kit/dns-server.ts naming them.
 */
import { fileURLToPath } from 'node:url';
import { startFakeMta } from '../test/kit/pipelining-mta.js';

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
  const { startDnsServer } = await import('../test/kit/dns-server.js');
  const world = JSON.parse(process.argv[2] ?? '{}') as BenchWorld;
  const catchAll = new Set(world.catchAllDomains);
  const mta = await startFakeMta({
    hosts: world.hosts,
    latencyMs: world.latencyMs,
    rcpt: benchRcptRule(catchAll),
    hardErrorLimit: world.hardErrorLimit,
  });
  const dns = await startDnsServer();
  world.hosts.forEach((ip, i) => dns.setDomain(`mx${i}.mta.bench`, { a: [ip] }));
  for (const [domain, hostIndex] of Object.entries(world.domains)) {
    dns.setDomain(domain, { mx: [{ exchange: `mx${hostIndex}.mta.bench`, priority: 10 }] });
  }
  dns.setDelay(world.latencyMs);
  let closing: Promise<unknown> | null = null;
  const close = (): Promise<unknown> => (closing ??= Promise.all([mta.close(), dns.close()]));
  process.on('message', (message: unknown) => {
    if (message === 'stats') process.send?.({ stats: { ...mta.stats(), sessions: [] } });
    if (message === 'reset') mta.resetStats();
    if (message === 'close') void close().then(() => process.disconnect());
  });
  process.on('disconnect', () => void close());
  process.send?.({ ready: { port: mta.port, dns: dns.address } });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runChild();
}

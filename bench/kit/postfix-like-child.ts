/**
 * Child process of the Postfix-like batch benchmark (bench/kit/postfix-run.ts): the Postfix-like
 * MTA (test/kit/postfix-like-mta.ts) on every MX host of the list and the fake DNS server, with
 * the protocol of bench/kit/bench-child.ts. Exits when its parent goes away.
 */
import { startDnsServer } from '../../test/kit/dns-server.js';
import type { PostfixRules } from '../../test/kit/postfix-like-mta.js';
import { startPostfixLikeMta } from '../../test/kit/postfix-like-mta.js';
import { benchRcptRule } from '../fake-mta-pipelining.js';

export interface PostfixWorld {
  hosts: string[];
  latencyMs: number;
  /** domain -> index into `hosts` of its MX. */
  domains: Record<string, number>;
  catchAllDomains: string[];
  rules: PostfixRules;
}

const world = JSON.parse(process.argv[2] ?? '{}') as PostfixWorld;
const rcpt = benchRcptRule(new Set(world.catchAllDomains));
const mta = await startPostfixLikeMta({
  hosts: world.hosts,
  latencyMs: world.latencyMs,
  ...world.rules,
  rcpt: (address) => rcpt(address),
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
  if (message === 'stats') process.send?.({ stats: mta.stats() });
  if (message === 'reset') mta.resetStats();
  if (message === 'close') void close().then(() => process.disconnect());
});
process.on('disconnect', () => void close());
process.send?.({ ready: { port: mta.port, dns: dns.address } });

/**
 * The address lists of the batch probing benchmarks: domains spread over a few MX hosts
 * (127.0.1.x), 10% unknown mailboxes, 5% catch-all domains, shuffled with a fixed seed so that
 * every run verifies the same list. The mailbox rule is `benchRcptRule` (bench/fake-mta-pipelining.ts):
 * local parts starting with "user" exist.
 */

export interface ListShape {
  addresses: number;
  domains: number;
  hosts: number;
  /**
   * Pick the catch-all domains by their rank among their host's domains, so that every host
   * gets its share. By default they are every 20th domain from the 8th, which puts them all on
   * one host when the host count divides 20.
   */
  spreadCatchAll?: boolean;
}

export interface BenchList {
  /** MX host addresses. */
  hosts: string[];
  /** domain -> index into `hosts` of its MX. */
  domains: Record<string, number>;
  /** Domains that accept every recipient. */
  catchAllDomains: string[];
  emails: string[];
}

/** Deterministic pseudo-random numbers (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function buildList(shape: ListShape): BenchList {
  const hosts = Array.from({ length: shape.hosts }, (_, i) => `127.0.1.${i + 1}`);
  const domains: Record<string, number> = {};
  const catchAllDomains: string[] = [];
  const emails: string[] = [];
  const perDomain = Math.ceil(shape.addresses / shape.domains);
  for (let d = 0; d < shape.domains; d++) {
    const domain = `d${d}.bench-mail.test`;
    domains[domain] = d % shape.hosts;
    const rank = shape.spreadCatchAll === true ? Math.floor(d / shape.hosts) : d;
    if (rank % 20 === 7) catchAllDomains.push(domain);
    for (let i = 0; i < perDomain && emails.length < shape.addresses; i++) {
      emails.push(`${i % 10 === 3 ? 'nobody' : 'user'}${i}@${domain}`);
    }
  }
  const random = seeded(42);
  for (let i = emails.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [emails[i], emails[j]] = [emails[j]!, emails[i]!];
  }
  return { hosts, domains, catchAllDomains, emails };
}

/** The RCPTs a pooled prober sends to one MX host for a list. */
export interface HostWork {
  host: string;
  /** One per address and one catch-all probe per domain. */
  rcpts: number;
  addresses: number;
  /** Share of the RCPTs refused: unknown mailboxes, and the probes of domains that are not catch-all. */
  refused: number;
}

/** What each MX host of `list` is asked, in the order of `list.hosts`. */
export function hostWork(list: BenchList): HostWork[] {
  const catchAll = new Set(list.catchAllDomains);
  const work = list.hosts.map((host) => ({ host, rcpts: 0, addresses: 0, refusedRcpts: 0 }));
  const probed = new Set<string>();
  for (const email of list.emails) {
    const domain = email.slice(email.lastIndexOf('@') + 1);
    const host = work[list.domains[domain]!]!;
    host.rcpts += 1;
    host.addresses += 1;
    if (!probed.has(domain)) {
      probed.add(domain);
      host.rcpts += 1;
      if (!catchAll.has(domain)) host.refusedRcpts += 1;
    }
    if (!email.startsWith('user') && !catchAll.has(domain)) host.refusedRcpts += 1;
  }
  return work.map(({ refusedRcpts, ...host }) => ({
    ...host,
    refused: refusedRcpts / Math.max(1, host.rcpts),
  }));
}

/**
 * The throughput that a per-host session cap and Postfix's rules allow a prober, whatever its
 * implementation: sessions per host × recipients per session ÷ session time, summed over hosts.
 *
 * A session's recipients and time are expectations over a list in which a share `refused` of
 * the RCPTs is refused (unknown mailboxes and catch-all probes, in random order), for a client
 * that never makes the server slow down or drop it:
 *
 * - it sends at most as many RCPTs in one round trip as it may still have refused (every one of
 *   them may be), and ends the session at its reject budget; past `smtpd_soft_error_limit` - 1
 *   errors every reply, QUIT's included, costs `smtpd_error_sleep_time` more;
 * - each transaction costs `in_flow_delay` at its first accepted RCPT (the in-flow tokens are
 *   spent: a prober's transactions never become mail);
 * - session time = (banner + EHLO + RCPT round trips + QUIT) × latency + transactions ×
 *   in_flow_delay (MAIL FROM and RSET ride with the RCPTs; TCP connect on loopback counts 0).
 *
 * The rate of a policy at a host is sessions × E[recipients] ÷ E[session time] (renewal-reward:
 * sessions follow one another in each slot); a list takes as long as its slowest host. The bound
 * takes, per host, the best reject budget up to the soft limit with no other limit than the
 * server's: one transaction up to `smtpd_recipient_limit`, as many RCPTs per round trip as the
 * rejects left. A budget past the soft limit only adds a sleep of a second or more for a few
 * recipients, so it is never the best (it is priced at one sleep, a floor).
 */

/** The client's choices, as the batch engine's tuning names them. */
export interface SessionPolicy {
  maxRejectsPerSession: number;
  pipelineDepth: number;
  recipientsPerSession: number;
  recipientsPerTransaction: number;
}

export interface ServerRules {
  latencyMs: number;
  inFlowDelayMs: number;
  softErrorLimit: number;
  errorSleepMs: number;
  recipientLimit: number;
}

export interface SessionExpectation {
  rcpts: number;
  roundTrips: number;
  transactions: number;
  timeMs: number;
}

/** Sessions are cut at this many RCPTs in the computation (a session that long is not polite). */
const MAX_SESSION_RCPTS = 5_000;

/** Expected RCPTs, round trips, transactions and time of one session under `policy`. */
export function expectSession(
  refused: number,
  rules: ServerRules,
  policy: SessionPolicy,
): SessionExpectation {
  const budget = policy.maxRejectsPerSession;
  const perSession = Math.min(policy.recipientsPerSession, MAX_SESSION_RCPTS);
  const perTransaction = Math.max(1, Math.min(policy.recipientsPerTransaction, rules.recipientLimit));
  const maxWindow = Math.min(policy.pipelineDepth, budget);
  const binomial = binomialTable(maxWindow, refused);
  // Values per state (rejects so far k, RCPTs so far n); n only grows, so fill from the end.
  const width = perSession + 1;
  const rcpts = new Float64Array((budget + 1) * width);
  const trips = new Float64Array((budget + 1) * width);
  const transactions = new Float64Array((budget + 1) * width);
  for (let n = perSession - 1; n >= 0; n--) {
    for (let k = budget - 1; k >= 0; k--) {
      const window = Math.min(maxWindow, budget - k, perSession - n, perTransaction - (n % perTransaction));
      const p = binomial[window]!;
      let r = window;
      let t = 1;
      let x = n % perTransaction === 0 ? 1 : 0;
      for (let j = 0; j <= window; j++) {
        const next = (k + j) * width + n + window;
        r += p[j]! * rcpts[next]!;
        t += p[j]! * trips[next]!;
        x += p[j]! * transactions[next]!;
      }
      rcpts[k * width + n] = r;
      trips[k * width + n] = t;
      transactions[k * width + n] = x;
    }
  }
  const sleeps = rules.softErrorLimit > 0 && budget >= rules.softErrorLimit ? rules.errorSleepMs : 0;
  const roundTrips = 3 + trips[0]!;
  return {
    rcpts: rcpts[0]!,
    roundTrips,
    transactions: transactions[0]!,
    timeMs: roundTrips * rules.latencyMs + transactions[0]! * rules.inFlowDelayMs + sleeps,
  };
}

/** What each MX host is asked (bench/kit/bench-list.ts). */
export interface HostWork {
  host: string;
  rcpts: number;
  addresses: number;
  /** Share of the RCPTs refused. */
  refused: number;
}

export interface ClientLimits {
  perHostConcurrency: number;
  globalConcurrency: number;
  /** Source addresses; each gets the per-host cap (within the server's per-client limit). */
  egress: number;
  /** The server's smtpd_client_connection_count_limit (0: none). */
  clientConnectionLimit: number;
}

export interface HostRate {
  host: HostWork;
  rejectBudget: number;
  session: SessionExpectation;
  /** RCPTs per second at this host. */
  rcptsPerSecond: number;
  /** How long this host's work takes at that rate. */
  seconds: number;
}

export interface Bound {
  sessionsPerHost: number;
  hosts: HostRate[];
  /** The host whose work takes longest: the list cannot be done sooner. */
  slowest: HostRate;
  /** All the list's addresses ÷ the slowest host's time. */
  addressesPerSecond: number;
}

/** Sessions open at once per host: per-host cap per egress, within the server's and the global cap. */
export function sessionsPerHost(limits: ClientLimits, hosts: number): number {
  const perClient =
    limits.clientConnectionLimit > 0
      ? Math.min(limits.perHostConcurrency, limits.clientConnectionLimit)
      : limits.perHostConcurrency;
  return Math.min(perClient * limits.egress, Math.floor(limits.globalConcurrency / hosts));
}

function hostRate(host: HostWork, sessions: number, rules: ServerRules, policy: SessionPolicy): HostRate {
  const session = expectSession(host.refused, rules, policy);
  const rcptsPerSecond = (sessions * session.rcpts * 1000) / session.timeMs;
  return {
    host,
    rejectBudget: policy.maxRejectsPerSession,
    session,
    rcptsPerSecond,
    seconds: host.rcpts / rcptsPerSecond,
  };
}

function listRate(hosts: HostRate[], sessions: number): Bound {
  const slowest = hosts.reduce((a, b) => (b.seconds > a.seconds ? b : a));
  const addresses = hosts.reduce((sum, h) => sum + h.host.addresses, 0);
  return { sessionsPerHost: sessions, hosts, slowest, addressesPerSecond: addresses / slowest.seconds };
}

/** Throughput of `policy` on the list (addresses/s), everything else as the bound assumes. */
export function policyRate(
  work: HostWork[],
  limits: ClientLimits,
  rules: ServerRules,
  policy: SessionPolicy,
): Bound {
  const sessions = sessionsPerHost(limits, work.length);
  return listRate(
    work.map((host) => hostRate(host, sessions, rules, policy)),
    sessions,
  );
}

/** The most the per-host cap and the server's rules allow (see the top of this file). */
export function throughputBound(work: HostWork[], limits: ClientLimits, rules: ServerRules): Bound {
  const sessions = sessionsPerHost(limits, work.length);
  const highest = rules.softErrorLimit > 0 ? rules.softErrorLimit : 20;
  const hosts = work.map((host) => {
    let best: HostRate | null = null;
    for (let budget = 1; budget <= highest; budget++) {
      const rate = hostRate(host, sessions, rules, {
        maxRejectsPerSession: budget,
        pipelineDepth: Infinity,
        recipientsPerSession: MAX_SESSION_RCPTS,
        recipientsPerTransaction: rules.recipientLimit,
      });
      if (best === null || rate.rcptsPerSecond > best.rcptsPerSecond) best = rate;
    }
    return best!;
  });
  return listRate(hosts, sessions);
}

/** P(j of w RCPTs refused) for every window w up to `max`. */
function binomialTable(max: number, p: number): number[][] {
  const table: number[][] = [[1]];
  for (let w = 1; w <= max; w++) {
    const row: number[] = [];
    for (let j = 0; j <= w; j++) row.push(choose(w, j) * p ** j * (1 - p) ** (w - j));
    table.push(row);
  }
  return table;
}

function choose(n: number, k: number): number {
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return c;
}

/**
 * Negative DNS answers shared between engines: a domain that another worker found to have no mail
 * host (NXDOMAIN, no MX and no address, a null MX) is not looked up again here until that answer's
 * negative TTL runs out. Positive answers stay in each engine's own resolver cache: they carry
 * the MX host addresses that each process shuffles and checks itself, and are cheap to repeat.
 */
import type { SharedCache } from '../coordination.js';
import type { DnsOutcome } from '../outcome.js';
import type { BackgroundTasks } from '../background.js';

export type NegativeDnsOutcome = Extract<DnsOutcome, { kind: 'nxdomain' | 'no_mail_host' | 'null_mx' }>;

export interface SharedDnsDeps {
  cache: SharedCache<NegativeDnsOutcome>;
  negativeTtlMs: number;
  background: BackgroundTasks;
  failed(error: unknown, operation: string): void;
}

/** `resolve`, with the shared negative answers asked first and fed with its own. Never rejects. */
export function withSharedNegativeAnswers(
  resolve: (domain: string) => Promise<DnsOutcome>,
  deps: SharedDnsDeps,
): (domain: string) => Promise<DnsOutcome> {
  return async (domain) => {
    try {
      const shared = await deps.cache.get(domain);
      if (shared !== undefined && isNegative(shared)) return shared;
    } catch (error) {
      // A shared cache that fails is a miss.
      deps.failed(error, 'cache');
    }
    const outcome = await resolve(domain);
    if (isNegative(outcome))
      deps.background.track('cache', deps.cache.set(domain, outcome, deps.negativeTtlMs));
    return outcome;
  };
}

function isNegative(outcome: DnsOutcome): outcome is NegativeDnsOutcome {
  return outcome.kind === 'nxdomain' || outcome.kind === 'no_mail_host' || outcome.kind === 'null_mx';
}

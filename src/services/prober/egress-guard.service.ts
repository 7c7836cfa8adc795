/**
 * The reputation guard of a process (engine/egress/egress-guard.ts) built from the service's
 * settings, and the report `mailverdict egresses` prints. `runtime.ts` gives every `serve` and
 * `worker` process one guard, on Redis when configured (src/redis/egress-health.ts), and the
 * engine's two paths (single verifications, batch jobs) consult it.
 */
import type { Config } from '../../config.js';
import { DnsLookups } from '../../engine/dns/lookups.js';
import { buildEgresses } from '../../engine/egress/egress.js';
import type { EgressGuardDeps } from '../../engine/egress/egress-guard.js';
import { EgressGuard, type EgressStatus } from '../../engine/egress/egress-guard.js';
import type { EgressHealthStore } from '../../engine/egress/egress-health.js';

export interface GuardDeps {
  store: EgressHealthStore;
  now: () => number;
  logger?: EgressGuardDeps['logger'];
  /** How often the shared state is read (default 10 s); tests make it short. */
  syncMs?: number;
}

/** A guard over the egresses of `config`, asking the configured DNS servers. */
export function createEgressGuard(
  config: Pick<Config, 'engine' | 'doctor' | 'guard'>,
  deps: GuardDeps,
): EgressGuard {
  return new EgressGuard(
    {
      egresses: buildEgresses(config.engine.smtp),
      dnsblZones: config.doctor.dnsblZones,
      checkIntervalMs: config.guard.checkIntervalMs,
      blockHosts: config.guard.blockHosts,
      blockWindowMs: config.guard.blockWindowMs,
      blockRestMs: config.guard.blockRestMs,
      checkInternalAddresses: config.engine.dns.allowInternalTargets === true,
      ...(deps.syncMs === undefined ? {} : { syncMs: deps.syncMs }),
    },
    {
      store: deps.store,
      lookups: new DnsLookups(config.engine.dns),
      now: deps.now,
      ...(deps.logger === undefined ? {} : { logger: deps.logger }),
    },
  );
}

/** What `mailverdict egresses` shows: each egress's health, as stored (after a check if one is due). */
export interface EgressReport {
  /** True when the state is the one every process on Redis shares. */
  shared: boolean;
  egresses: EgressStatus[];
}

/**
 * The egresses' health from `store`: with Redis, the state every process shares; a check is run
 * first when one is due (no process checked within the interval), otherwise none. Without Redis
 * the store is this process's own, so the blocklists are asked now (run-time blocks live in the
 * serving process: its log and /metrics).
 */
export async function egressReport(
  config: Pick<Config, 'engine' | 'doctor' | 'guard'>,
  deps: GuardDeps & { shared: boolean },
): Promise<EgressReport> {
  const interval = config.guard.checkIntervalMs > 0 || deps.shared ? config.guard.checkIntervalMs : 1;
  const guard = createEgressGuard({ ...config, guard: { ...config.guard, checkIntervalMs: interval } }, deps);
  try {
    await guard.tick();
    return { shared: deps.shared, egresses: guard.statuses() };
  } finally {
    await guard.stop();
  }
}

/**
 * What the reputation guard (egress-guard.ts) knows of each egress, and the port through which
 * processes share it: in this process (createLocalEgressHealth, the default), or in Redis
 * (src/redis/egress-health.ts), where every API and worker process on it sees one state per
 * egress, and one process per interval queries the blocklists for all of them.
 */
import { TtlMap } from '../ttl-map.js';

/** An egress's health: `ok` opens sessions; `listed` and `degraded` rest. */
export type EgressStateName = 'ok' | 'listed' | 'degraded';
export const EGRESS_STATES: readonly EgressStateName[] = ['ok', 'listed', 'degraded'];

/** One zone's answer in a check: `cannot_tell` is a refused query or a DNS failure. */
export interface ZoneAnswer {
  zone: string;
  result: 'listed' | 'clean' | 'cannot_tell';
  /** The return codes and the list's reason (listed), or why it cannot tell. */
  detail: string | null;
}

/** The last blocklist check of an egress's address. */
export interface EgressCheck {
  /** Epoch ms of the check. */
  at: number;
  listed: boolean;
  /** Epoch ms since which `listed` has had its value. */
  since: number;
  zones: ZoneAnswer[];
}

/** A rest after blocks seen at run time. */
export interface EgressDegradation {
  since: number;
  /** Epoch ms when the rest ends. */
  until: number;
  reason: string;
}

/** What is stored of one egress. */
export interface EgressRecord {
  check: EgressCheck | null;
  degraded: EgressDegradation | null;
}

/** Where the guard keeps what it knows (shared by every process on one Redis). */
export interface EgressHealthStore {
  /**
   * Takes the right to run the task `name` for `ttlMs` (one holder at a time, SET NX PX): false
   * when another process (or this one, less than `ttlMs` ago) took it.
   */
  tryLease(name: string, ttlMs: number): Promise<boolean>;
  read(egressIds: readonly string[]): Promise<Map<string, EgressRecord>>;
  writeCheck(egressId: string, check: EgressCheck): Promise<void>;
  /** Records a rest, and forgets the refusals counted so far. */
  writeDegraded(egressId: string, degraded: EgressDegradation): Promise<void>;
  /**
   * Notes that mail host `host` refused the egress at epoch ms `at`; returns how many distinct
   * hosts did within the last `windowMs`.
   */
  addRefusal(egressId: string, host: string, at: number, windowMs: number): Promise<number>;
}

/** The state a record gives at epoch ms `now`: listed wins over degraded, which ends at `until`. */
export function stateOf(record: EgressRecord | undefined, now: number): EgressStateName {
  if (record?.check?.listed === true) return 'listed';
  if (record?.degraded !== null && record?.degraded !== undefined && record.degraded.until > now)
    return 'degraded';
  return 'ok';
}

/** Since when the state at `now` holds (0: since the guard has known the egress). */
export function stateSince(record: EgressRecord | undefined, now: number): number {
  const state = stateOf(record, now);
  if (state === 'listed') return record!.check!.since;
  if (state === 'degraded') return record!.degraded!.since;
  const cleared = record?.check?.listed === false ? record.check.since : 0;
  const rested = record?.degraded !== null && record?.degraded !== undefined ? record.degraded.until : 0;
  return Math.max(cleared, rested);
}

/** Refusals remembered per egress (distinct hosts in a window are a handful). */
const MAX_TRACKED = 10_000;

/** The store of one process: what `serve` or `worker` use without Redis. */
export function createLocalEgressHealth(now: () => number = Date.now): EgressHealthStore {
  const leases = new TtlMap<string, true>(MAX_TRACKED, now);
  const records = new Map<string, EgressRecord>();
  const refusals = new Map<string, Map<string, number>>();
  const record = (id: string): EgressRecord => {
    let found = records.get(id);
    if (found === undefined) {
      found = { check: null, degraded: null };
      records.set(id, found);
    }
    return found;
  };
  return {
    tryLease: async (name, ttlMs) => {
      if (leases.get(name) !== undefined) return false;
      leases.set(name, true, ttlMs);
      return true;
    },
    read: async (ids) =>
      new Map(
        ids.flatMap((id) => {
          const found = records.get(id);
          return found === undefined ? [] : [[id, structuredClone(found)] as const];
        }),
      ),
    writeCheck: async (id, check) => {
      record(id).check = structuredClone(check);
    },
    writeDegraded: async (id, degraded) => {
      record(id).degraded = { ...degraded };
      refusals.delete(id);
    },
    addRefusal: async (id, host, at, windowMs) => {
      let hosts = refusals.get(id);
      if (hosts === undefined) {
        hosts = new Map();
        refusals.set(id, hosts);
      }
      hosts.set(host, at);
      for (const [each, seen] of hosts) if (seen <= at - windowMs) hosts.delete(each);
      if (hosts.size > MAX_TRACKED) hosts.delete(hosts.keys().next().value!);
      return hosts.size;
    },
  };
}

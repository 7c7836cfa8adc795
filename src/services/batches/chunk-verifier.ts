/**
 * Turns a chunk's addresses into result rows: test jobs through the fixed test-mode results
 * (no network), live jobs through the batch engine (per-domain grouping, connection reuse).
 *
 * An address that occurs in several chunks of a live job (submission marks them: `repeats`) is
 * probed once per job. Within a process the first chunk to meet it probes it and the others wait
 * for and copy that result. Given a coordination (Redis in the scale-out mode), processes share
 * too: a worker first looks the address up among the job's shared results (`cache('result')`),
 * else claims it (a one-slot lease, renewed while it probes) and publishes a conclusive result for
 * the others; a worker that finds it claimed waits for that result, or probes it itself when the
 * claim ends without one (an unknown result, a dead worker). While the coordination is
 * unreachable every worker probes its own repeats: a second probe costs less than a stalled job.
 * The engine already deduplicates within one chunk.
 *
 * While the DNS resolver is not trusted (engine/dns/resolver-trust.ts), an address whose answer
 * rests on its NXDOMAIN or "no mail host" is not settled: the chunk keeps its lease and waits for
 * the resolver to be trusted again, then verifies those addresses again (docs/prober.md, "A resolver
 * that tells the truth").
 *
 * Live jobs share the result cache of single verifications (services/verify/result-cache.ts): an address
 * the job's account verified recently is answered from it without a probe, and what the engine
 * finds out is kept in it for later requests and jobs.
 *
 * Before either, the account's filters and delivery outcomes are read for the addresses about to
 * be probed (one read of each per group, services/outcomes/account-data.ts): an address a filter
 * or a suppression (hard bounce, complaint) decides costs the mail servers nothing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { HOUR, SECOND } from '../../clock.js';
import type { BatchEngine } from '../../engine/batch/types.js';
import type { EngineCoordination, SharedCache, SlotLease } from '../../engine/coordination.js';
import type { ResolverTrust } from '../../engine/dns/resolver-trust.js';
import type { VerificationResult, Verifier } from '../../engine/types.js';
import { restsOnUntrustedResolver } from '../../engine/verifier.js';
import type { ResultCache } from '../verify/result-cache.js';
import type { AccountData } from '../outcomes/account-data.js';
import type { VerdictLog } from '../outcomes/verdict-log.js';
import { NO_HISTORY, type AddressHistory } from '../outcomes/history.js';
import { testModeResult } from '../verify/test-mode.js';
import { addressKey, type ResultRow } from '../../store/chunk-codec.js';
import type { JobMode } from '../../store/schema/jobs.schema.js';

export interface ChunkJob {
  id: string;
  mode: JobMode;
  /** The job's account: the scope of its result-cache entries. Absent: the cache is not used. */
  accountId?: string;
}

/** `repeats`: positions in `emails` whose address occurs elsewhere in the job too. */
export type ChunkVerifier = (
  job: ChunkJob,
  emails: readonly string[],
  signal: AbortSignal,
  repeats?: readonly number[],
) => Promise<ResultRow[]>;

export interface ChunkVerifierDeps {
  verifier: Verifier;
  /**
   * The trust of the batch engine's resolver (AppContext.dnsTrust): addresses whose answers rest on
   * an untrusted resolver wait for it to be trusted again and are verified again.
   */
  dnsTrust: ResolverTrust;
  /** Null: this process cannot run live jobs (they fail loudly rather than silently pass). */
  batchEngine: BatchEngine | null;
  testDomain: string;
  testModeChunkDelayMs: number;
  /**
   * Shared with the other worker processes (the batch engine's, through Redis): repeated
   * addresses of a job are then probed once by all of them. Absent: once per process.
   */
  coordination?: EngineCoordination | null;
  /** Between two looks at an address another worker is probing. Default 200 ms. */
  sharedPollMs?: number;
  /** The process's result cache (AppContext.resultCache); absent or null: every address is probed. */
  resultCache?: ResultCache | null;
  /** The accounts' filters and delivery outcomes (services/outcomes/account-data.ts); absent or null: none are read. */
  accountData?: AccountData | null;
  /** Remembers live verdicts for the accuracy report (services/outcomes/verdict-log.ts); absent or null: not kept. */
  verdictLog?: VerdictLog | null;
}

/** Jobs whose repeated-address results are kept; a worker runs at most a few jobs at once. */
const JOBS_REMEMBERED = 8;
/**
 * How long a shared result is kept. A job's chunks are claimed within minutes of each other; a
 * repeat met later than this (a job paused for hours) is simply probed again.
 */
const SHARED_RESULT_TTL_MS = 6 * HOUR;
/** A claim outlives its worker by at most this long; renewed every third of it while probing. */
const CLAIM_LEASE_MS = 30 * SECOND;
/** What another worker may reuse: an unknown result is worth probing again. */
const CONCLUSIVE: ReadonlySet<string> = new Set(['deliverable', 'undeliverable', 'risky']);

function toRow(r: VerificationResult): ResultRow {
  return {
    status: r.status,
    score: r.score,
    reason: r.reason,
    valid: r.valid,
    provider: r.checks.mx.provider,
  };
}

/** A repeated address this chunk is first in its process to meet. */
interface Owned {
  key: string;
  index: number;
  resolve(row: ResultRow): void;
  reject(err: unknown): void;
  /** Held while this chunk probes it for every worker. */
  claim?: SlotLease;
}

/** Another worker's result, or the go-ahead to probe here (with the claim, null when unclaimed). */
type Settled = { row: ResultRow } | { claim: SlotLease | null };

/** A job's conclusive results shared through a coordination, and the claims of addresses being probed. */
class SharedResults {
  readonly #results: SharedCache<ResultRow>;
  readonly #coordination: EngineCoordination;
  readonly #pollMs: number;

  constructor(coordination: EngineCoordination, pollMs: number) {
    this.#coordination = coordination;
    this.#results = coordination.cache<ResultRow>('result');
    this.#pollMs = pollMs;
  }

  /** One look: a shared result, a claim taken, or null when another worker holds the claim. */
  async tryOnce(jobId: string, key: string): Promise<Settled | null> {
    const found = await this.#lookUp(jobId, key);
    if (found) return { row: found };
    let claim: SlotLease | null;
    try {
      claim = await this.#coordination.slots.tryAcquire(claimKey(jobId, key), 1, CLAIM_LEASE_MS);
    } catch {
      return { claim: null };
    }
    if (claim === null) return null;
    // The holder before us may have published and let go between our look and our claim.
    const published = await this.#lookUp(jobId, key);
    if (!published) return { claim };
    await this.release([claim]);
    return { row: published };
  }

  /** Looks until the address is settled; rejects when `signal` aborts. */
  async settle(jobId: string, key: string, signal: AbortSignal): Promise<Settled> {
    for (;;) {
      await sleep(this.#pollMs, undefined, { signal });
      const settled = await this.tryOnce(jobId, key);
      if (settled) return settled;
    }
  }

  async publish(jobId: string, key: string, row: ResultRow): Promise<void> {
    if (!CONCLUSIVE.has(row.status)) return;
    await this.#results.set(resultKey(jobId, key), row, SHARED_RESULT_TTL_MS).catch(() => undefined);
  }

  /** Renews `claims` every third of their lease until the returned function is called. */
  keepClaims(claims: Iterable<SlotLease>): () => void {
    const timer = setInterval(() => {
      for (const claim of claims) {
        this.#coordination.slots.renew(claim, CLAIM_LEASE_MS).catch(() => undefined);
      }
    }, CLAIM_LEASE_MS / 3);
    return () => clearInterval(timer);
  }

  async release(claims: Iterable<SlotLease>): Promise<void> {
    await Promise.all(
      [...claims].map((claim) => this.#coordination.slots.release(claim).catch(() => undefined)),
    );
  }

  async #lookUp(jobId: string, key: string): Promise<ResultRow | undefined> {
    // Unreachable: a miss (the address is probed here).
    const row = await this.#results.get(resultKey(jobId, key)).catch(() => undefined);
    return row !== undefined && CONCLUSIVE.has(row.status) ? row : undefined;
  }
}

const resultKey = (jobId: string, key: string): string => `${jobId}|${key}`;

function untrustedIndexes(results: readonly VerificationResult[]): number[] {
  return results.flatMap((result, index) => (restsOnUntrustedResolver(result) ? [index] : []));
}
const claimKey = (jobId: string, key: string): string => `result-claim|${jobId}|${key}`;

export function createChunkVerifier(deps: ChunkVerifierDeps): ChunkVerifier {
  const local = new Map<string, Map<string, Promise<ResultRow>>>();
  const shared = deps.coordination ? new SharedResults(deps.coordination, deps.sharedPollMs ?? 200) : null;

  function localOf(jobId: string): Map<string, Promise<ResultRow>> {
    let map = local.get(jobId);
    if (!map) {
      map = new Map();
      local.set(jobId, map);
      // Map keeps insertion order: the first key is the job met longest ago.
      if (local.size > JOBS_REMEMBERED) local.delete(local.keys().next().value!);
    }
    return map;
  }

  async function verifyLive(
    engine: BatchEngine,
    job: ChunkJob,
    emails: readonly string[],
    signal: AbortSignal,
    repeats: readonly number[],
  ): Promise<ResultRow[]> {
    const rows = new Array<ResultRow | undefined>(emails.length);
    const known = localOf(job.id);
    const waiting: [number, Promise<ResultRow>][] = [];
    const owned: Owned[] = [];
    const repeated = new Set(repeats);
    const toProbe: number[] = [];
    for (let i = 0; i < emails.length; i++) {
      if (!repeated.has(i)) {
        toProbe.push(i);
        continue;
      }
      const key = addressKey(emails[i]!);
      const pending = known.get(key);
      if (pending) {
        waiting.push([i, pending]);
        continue;
      }
      let settle!: Pick<Owned, 'resolve' | 'reject'>;
      const promise = new Promise<ResultRow>((resolve, reject) => (settle = { resolve, reject }));
      // Nobody may be waiting when it fails; that is not an unhandled rejection.
      promise.catch(() => {});
      known.set(key, promise);
      owned.push({ key, index: i, ...settle });
    }

    const claims = new Set<SlotLease>();
    const stopRenewing = shared?.keepClaims(claims);
    // Ends the waits for other workers' results when this chunk fails or is aborted.
    const waits = new AbortController();
    const onAbort = (): void => waits.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const { resultCache } = deps;
    const cached =
      resultCache && job.accountId !== undefined ? { cache: resultCache, accountId: job.accountId } : null;
    const probe = async (indexes: readonly number[]): Promise<void> => {
      if (indexes.length === 0) return;
      let toProbe = indexes;
      const account =
        deps.accountData && job.accountId !== undefined
          ? { data: deps.accountData, id: job.accountId }
          : null;
      const histories = new Map<number, AddressHistory>();
      if (account) {
        const decisions = await account.data.decide(
          account.id,
          toProbe.map((i) => emails[i]!),
        );
        signal.throwIfAborted();
        const rest: number[] = [];
        toProbe.forEach((index, k) => {
          const decision = decisions[k]!;
          if ('result' in decision) rows[index] = toRow(decision.result);
          else {
            histories.set(index, decision.history);
            rest.push(index);
          }
        });
        toProbe = rest;
      }
      // What the network said (now or through the cache), before the account's evidence.
      const found: [number, VerificationResult][] = [];
      if (cached && toProbe.length > 0) {
        const hits = await cached.cache.lookUp(
          cached.accountId,
          toProbe.map((i) => emails[i]!),
        );
        signal.throwIfAborted();
        const misses: number[] = [];
        toProbe.forEach((index, k) => {
          const hit = hits[k];
          if (hit) found.push([index, hit.result]);
          else misses.push(index);
        });
        toProbe = misses;
      }
      if (toProbe.length > 0) {
        // Addresses that rest on an untrusted resolver's answer wait for it to be trusted again.
        const results = await verifyTrusted(
          engine,
          toProbe.map((i) => emails[i]!),
          signal,
          job.id,
        );
        signal.throwIfAborted();
        toProbe.forEach((index, k) => found.push([index, results[k]!]));
        await cached?.cache.store(cached.accountId, results);
      }
      const finished = account
        ? await account.data.finish(
            account.id,
            found.map(([, r]) => r),
            found.map(([index]) => histories.get(index) ?? NO_HISTORY),
          )
        : found.map(([, r]) => r);
      found.forEach(([index], k) => (rows[index] = toRow(finished[k]!)));
      // Issue 27, part 4: the network's verdicts (not the account-decided ones) go to the verdict log.
      if (deps.verdictLog && job.accountId !== undefined)
        deps.verdictLog.record(
          job.accountId,
          found.map(([index]) => ({ email: emails[index]!, ...rows[index]! })),
        );
    };
    // Probes `batch` (owned addresses settled to "probe here" among them), then lets the owned
    // ones go at once: other chunks and workers wait for them, and this chunk may wait for theirs.
    const probeAndShare = async (batch: readonly number[], probed: readonly Owned[]): Promise<void> => {
      await probe(batch);
      for (const o of probed) o.resolve(rows[o.index]!);
      if (!shared) return;
      await Promise.all(probed.map((o) => shared.publish(job.id, o.key, rows[o.index]!)));
      const done = probed.flatMap((o) => (o.claim ? [o.claim] : []));
      for (const claim of done) claims.delete(claim);
      await shared.release(done);
    };
    const take = (o: Owned, settled: Settled, probed: Owned[]): void => {
      if ('row' in settled) {
        rows[o.index] = settled.row;
        o.resolve(settled.row);
        return;
      }
      if (settled.claim) {
        o.claim = settled.claim;
        claims.add(settled.claim);
      }
      probed.push(o);
    };
    try {
      const later: Owned[] = [];
      const probedFirst: Owned[] = [];
      if (shared === null) probedFirst.push(...owned);
      else {
        const first = await Promise.all(owned.map((o) => shared.tryOnce(job.id, o.key)));
        owned.forEach((o, k) => {
          const settled = first[k]!;
          if (settled === null) later.push(o);
          else take(o, settled, probedFirst);
        });
      }
      // This chunk's own probes run while it waits for the addresses other workers are probing.
      const waited = Promise.all(later.map((o) => shared!.settle(job.id, o.key, waits.signal)));
      waited.catch(() => {});
      await probeAndShare(
        [...toProbe, ...probedFirst.map((o) => o.index)].sort((a, b) => a - b),
        probedFirst,
      );
      const settled = await waited;
      const probedLater: Owned[] = [];
      later.forEach((o, k) => take(o, settled[k]!, probedLater));
      await probeAndShare(
        probedLater.map((o) => o.index),
        probedLater,
      );
    } catch (err) {
      // Let a later attempt (here or in another chunk) probe these again.
      for (const o of owned) {
        known.delete(o.key);
        o.reject(err);
      }
      throw err;
    } finally {
      waits.abort();
      signal.removeEventListener('abort', onAbort);
      stopRenewing?.();
      await shared?.release(claims);
    }
    for (const [index, promise] of waiting) rows[index] = await promise;
    return rows as ResultRow[];
  }

  /**
   * The engine's results, none resting on an untrusted resolver: those addresses wait until the
   * resolver is trusted again (the monitor re-checks it every 30 s) and are verified again.
   */
  async function verifyTrusted(
    engine: BatchEngine,
    emails: readonly string[],
    signal: AbortSignal,
    label: string,
  ): Promise<VerificationResult[]> {
    // The job's id names it in the engine's log line of an MX host given up.
    const results = await engine.verifyMany(emails, { signal, label });
    let pending = untrustedIndexes(results);
    while (pending.length > 0) {
      await deps.dnsTrust.whenTrusted(signal);
      const again = await engine.verifyMany(
        pending.map((i) => emails[i]!),
        { signal, label },
      );
      pending.forEach((index, k) => (results[index] = again[k]!));
      pending = pending.filter((index) => restsOnUntrustedResolver(results[index]!));
    }
    return results;
  }

  return async (job, emails, signal, repeats = []) => {
    if (job.mode === 'test') {
      const rows = emails.map((e) => toRow(testModeResult(e, deps.verifier, deps.testDomain)));
      if (deps.testModeChunkDelayMs > 0) await sleep(deps.testModeChunkDelayMs, undefined, { signal });
      signal.throwIfAborted();
      return rows;
    }
    if (deps.batchEngine === null) throw new Error('no batch engine in this process');
    return verifyLive(deps.batchEngine, job, emails, signal, repeats);
  };
}

/**
 * Where a single verification gets its SMTP session (../probe.ts asks, and keeps the MX order,
 * Happy Eyeballs and the transaction): an idle warm session of its lane, one that comes back from
 * another verification within a greeting's time, or the right to open a new one within the caps;
 * and what becomes of it: a new one's slots follow the address Happy Eyeballs connected to
 * (`settle`), and after its transaction it goes back among the idle sessions or retires (`settled`).
 *
 * The caps are the process's: the per-host, per-provider and global ones of a HostLimiter, shared
 * with the batch engine of the process through the process's session broker when one is given
 * (broker.ts, whose idle sessions include the batches' with no work left), and with Redis, one of
 * the lane's `perHostConcurrency` slots there (and one of its provider's), the batch engines'
 * semaphore, for the life of each new session; a warm session reused costs no round trip to it.
 */
import type { EngineCoordination } from '../coordination.js';
import type { Egress } from '../egress/egress.js';
import type { OpenResult } from '../smtp/session.js';
import { HostLimiter, type HostLimiterOptions } from './host-limiter.js';
import { SessionBroker } from './broker.js';
import type { SlotHolding } from './shared-politeness.js';
import { SharedPoliteness } from './shared-politeness.js';
import type { WarmEntry, WarmPoolStats, WarmSessionOptions } from './warm-pool.js';
import { WarmPool } from './warm-pool.js';

/** The coordination whose slots single verifications share with batches in other processes. */
export interface SharedSlots {
  coordination: EngineCoordination;
  /** The batch engines' `--per-host-concurrency` and `--provider-concurrency`: one cap for all. */
  perHostConcurrency: number;
  providerConcurrency?: number;
  /** Lease of one slot, renewed every third of it (default 15 s, as batch sessions). */
  leaseMs?: number;
  /** A coordination call failed (the verification then goes ahead under this process's caps). */
  failed?: (error: unknown, operation: string) => void;
}

export interface SingleSessionsDeps {
  /** Milliseconds since the epoch (the shared slots' leases and back-off). */
  clock: () => number;
  random: () => number;
  /**
   * The process's session broker (broker.ts): the per-host and per-provider caps shared with its
   * batches, and the idle sessions of both. Absent: the caps are these verifications' own.
   */
  broker?: SessionBroker;
  /** Session slots shared with other processes (Redis in the scale-out mode). */
  sharedSlots?: SharedSlots;
}

/** A lane asked for: (egress, host address) as `pairKey` writes it, and its provider group. */
export interface LaneRequest {
  key: string;
  group: string | null;
}

/**
 * The right to open one new session on a lane: its local slot is taken (and its shared ones, with
 * Redis). The opener says where the session went (`moveTo`, when Happy Eyeballs connected to
 * another lane), then `failed` or `opened`.
 */
export interface OpenPermit {
  /** The lane the slot is held for now. */
  readonly key: string;
  /**
   * Happy Eyeballs connected to another address of the host: the local slot goes to lane `key`
   * (of provider group `group`), and when the session opened, the shared one too where one is free.
   */
  moveTo(key: string, group: string | null, opened: boolean): Promise<void>;
  /** The shared slots go back once `closed` (the server no longer counts the connection). */
  releaseSharedOn(closed: Promise<void>): void;
}

/** What `take` found: a session to use, the right to open one, or nothing before the deadline. */
export type Taken =
  | { kind: 'warm'; lane: number; entry: WarmEntry }
  | { kind: 'open'; permit: OpenPermit }
  | { kind: 'timeout' };

/** A shared slot's lease: the batch engine's default (`sessionLeaseMs`). */
const DEFAULT_SHARED_LEASE_MS = 15_000;
/** Between two asks for a shared slot that was full: as the batch scheduler's retry wait. */
const SHARED_RETRY_MS = 50;

export class SingleSessions {
  readonly #clock: () => number;
  readonly #pool: WarmPool;
  /** Slots shared with other processes (Redis), when given. */
  readonly #shared: SharedPoliteness | null;
  /** Failed calls to the shared slots so far (an acquisition that saw one goes ahead without). */
  #sharedFailures = 0;
  readonly #unserve: () => void;

  constructor(caps: HostLimiterOptions, warm: WarmSessionOptions, deps: SingleSessionsDeps) {
    this.#clock = deps.clock;
    // With the process's broker, their new sessions count in its provider pace, which only the
    // batches wait for: a single verification is a person waiting.
    const limiter = new HostLimiter(
      deps.broker === undefined
        ? caps
        : { ...caps, providerSessionsPerSecond: undefined, pace: deps.broker.pace },
      deps.clock,
      deps.broker === undefined ? null : { broker: deps.broker, as: 'single' },
    );
    // Without the process's broker, a broker of their own keeps the idle sessions (no batch
    // shares its caps: they stay the limiter's alone).
    const broker = deps.broker ?? new SessionBroker({ perHostConcurrency: caps.perHostConcurrency });
    this.#pool = new WarmPool(warm, limiter, broker);
    const shared = deps.sharedSlots;
    this.#shared =
      shared === undefined
        ? null
        : new SharedPoliteness(
            shared.coordination,
            {
              perHostConcurrency: shared.perHostConcurrency,
              ...(shared.providerConcurrency === undefined
                ? {}
                : { providerConcurrency: shared.providerConcurrency }),
              leaseMs: shared.leaseMs ?? DEFAULT_SHARED_LEASE_MS,
              backoffBaseMs: caps.backoffBaseMs,
              backoffMaxMs: caps.backoffMaxMs,
            },
            {
              now: deps.clock,
              random: deps.random,
              changed: () => undefined,
              failed: (error, operation) => {
                this.#sharedFailures += 1;
                shared.failed?.(error, operation);
              },
            },
            // What the process's batch engines know of the shared slots and health, and learn.
            broker.sharedLanes(shared.coordination),
          );
    // Batch sessions with no work left wait among the broker's idle sessions while single
    // verifications keep warm ones (their Redis slots stay held by the batch that opened them).
    this.#unserve = broker.serveSingles(warm);
  }

  /**
   * A session for lane `first` before `deadlineAt`: when its host is raced, an idle one of `first`
   * or of one of the `raced` lanes (its other addresses: a session to one that won an earlier race
   * serves at once); else an idle one of `first`, else the one of its sessions in use that comes
   * back within the time a new one took to greet there, else the right to open one. A warm
   * session's `lane` is 0 for `first`, i + 1 for `raced[i]`.
   */
  async take(
    first: LaneRequest,
    raced: readonly string[],
    deadlineAt: number,
    signal: AbortSignal,
  ): Promise<Taken> {
    for (;;) {
      if (raced.length > 0) {
        const lanes = [first.key, ...raced];
        for (let lane = 0; lane < lanes.length; lane++) {
          const entry = this.#pool.takeIdle(lanes[lane]!);
          if (entry !== null) return { kind: 'warm', lane, entry };
        }
      }
      const slot = await this.#pool.acquire(first.key, deadlineAt, first.group);
      if (slot === 'timeout') return { kind: 'timeout' };
      if (slot !== 'open') return { kind: 'warm', lane: 0, entry: slot };
      // A session of the lane in use usually comes back within a round trip, sooner than a new
      // one is greeted (4 to 7): wait for it as long as its own greeting took, then open. No
      // connection is opened on speculation.
      const expected = this.#pool.expectedFreeMs(first.key);
      if (expected !== null) {
        const handed = await this.#pool.handoff(first.key, Math.min(deadlineAt, performance.now() + expected))
          .entry;
        if (handed !== null) {
          this.#pool.giveBack(first.key);
          return { kind: 'warm', lane: 0, entry: handed };
        }
      }
      // Across processes (Redis), a new session also takes one of the lane's shared slots (and
      // its provider's) for its life; when they are full, the local slot goes back meanwhile.
      let holdings: SlotHolding[] = [];
      if (this.#shared !== null) {
        const failuresBefore = this.#sharedFailures;
        const leases = await this.#shared.acquireLane(first.key, first.group);
        // Redis did not answer: a person is waiting, so the verification goes ahead under this
        // process's caps, as when the shared health cannot be read (batches wait instead).
        const unanswered = leases === null && this.#sharedFailures > failuresBefore;
        if (leases === null && !unanswered) {
          this.#pool.giveBack(first.key);
          const now = this.#clock();
          const waitUntil = Math.max(
            this.#shared.waitUntil(first.key, now),
            first.group === null ? 0 : this.#shared.waitUntil(first.group, now),
          );
          const wait = Math.max(SHARED_RETRY_MS, waitUntil - now);
          if (signal.aborted || performance.now() + wait >= deadlineAt) return { kind: 'timeout' };
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
        holdings = leases?.map((lease) => this.#shared!.hold(lease)) ?? [];
      }
      return { kind: 'open', permit: this.#permit(first.key, holdings) };
    }
  }

  /** Whether lane `key` has room for one more session under its per-host cap (the global one aside). */
  laneHasRoom(key: string): boolean {
    return this.#pool.laneHasRoom(key);
  }

  /**
   * The session opened on `permit` connected, or failed: its slot goes to lane `won` when Happy
   * Eyeballs connected to another address of the host than the first (and, opened, its shared
   * one where one is free there). An opened session is counted until the server lets it go, and
   * returned; a failed attempt's slot frees once the server no longer counts it (null). The
   * shared slots go back, either way, when the server no longer counts the connection.
   */
  async settle(
    permit: OpenPermit,
    opened: OpenResult,
    won: LaneRequest | null,
    at: { address: string; egress: Egress; greetMs: number },
  ): Promise<WarmEntry | null> {
    if (won !== null) await permit.moveTo(won.key, won.group, opened.ok);
    permit.releaseSharedOn(opened.ok ? opened.session.closed : opened.closed);
    if (!opened.ok) {
      this.#pool.openFailed(permit.key, opened.closed);
      return null;
    }
    return this.#pool.opened(permit.key, at.address, at.egress, opened.session, at.greetMs);
  }

  /**
   * A verification's transaction on `entry` is written; once every reply of its group is in
   * (`settled`, with the refused commands among them), the session goes back among the idle
   * ones when `keep` (it answered about the recipient), else it retires. Either way it stops
   * recording into the verification's transcript: a retired session's QUIT is still the
   * verification's, a kept one goes on clean.
   */
  settled(entry: WarmEntry, settled: Promise<number>, keep: boolean): void {
    void settled.then((rejects) => {
      entry.rejects += rejects;
      if (keep) {
        entry.session.recorder = null;
        this.release(entry);
      } else {
        this.retire(entry);
        entry.session.recorder = null;
      }
    });
  }

  /** The session is done with a verification: back to the pool, or retired when a bound is reached. */
  release(entry: WarmEntry): void {
    this.#pool.release(entry);
  }

  /** QUIT (the slot frees on the server's close). */
  retire(entry: WarmEntry): void {
    this.#pool.retire(entry);
  }

  /** A warm session taken from the pool carried a verification (metrics: the reuse ratio). */
  reusedOnce(): void {
    this.#pool.reusedOnce();
  }

  stats(): WarmPoolStats {
    return this.#pool.stats();
  }

  /** Retires every idle session; waiting verifications end as timed out. */
  close(): void {
    this.#unserve();
    this.#shared?.close();
    this.#pool.close();
  }

  #permit(first: string, holdings: SlotHolding[]): OpenPermit {
    const pool = this.#pool;
    let key = first;
    return {
      get key() {
        return key;
      },
      async moveTo(to, group, opened) {
        pool.moveSlot(key, to, group);
        key = to;
        // The shared (Redis) one too, when one is free there (else it stays the first address's).
        if (opened) await holdings[0]?.moveTo(to);
      },
      releaseSharedOn(closed) {
        void closed.then(() => {
          for (const holding of holdings) void holding.release();
        });
      },
    };
  }
}

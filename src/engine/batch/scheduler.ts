/**
 * Decides when a session to which MX host opens. Work waits in one queue per host; whenever
 * something changes (work queued, a session ended, a delay or a back-off ran out) `pump` opens
 * sessions where the global and per-host caps allow and the host is not backed off. A host that
 * keeps failing hands its work to each domain's next MX, and finally gives it up with the
 * failure as evidence. One scheduler serves every `verifyMany` call of an engine, so the caps
 * hold across concurrent calls (jobs) too.
 *
 * Liveness: sessions report every failure (`hostFailed`) and only an answer about a recipient
 * ends a failure streak (`hostAnswered`), so a host gets at most `maxHostFailures` failing
 * sessions in a row (plus those already open when the last one failed) before its work is
 * given up, each new one after its back-off; docs/batch-engine.md gives the bound.
 *
 * Per-host state (queues, limiter, back-off, hosts given up on) is keyed by the queue key, the
 * address sessions connect to; egress pools will make it (egress, host).
 *
 * Given a coordination shared with other processes, a session to a host also needs one of the
 * host's slots in it, and the shared back-off (shared-politeness.ts): N processes then open at
 * most `perHostConcurrency` sessions per host together. The global cap stays per process. Without
 * one, the caps and back-off are this process's alone (HostLimiter), with no asynchronous step
 * between deciding to open a session and opening it.
 */
import type { EngineCoordination } from '../coordination.js';
import type { SmtpOutcome } from '../outcome.js';
import { HostLimiter } from './host-limiter.js';
import { HostQueue } from './host-queue.js';
import type { HostFailure } from '../smtp/session.js';
import { connectionRefused } from '../smtp/session.js';
import { TtlMap } from '../ttl-map.js';
import type { HeldSlot, SlotHolding } from './shared-politeness.js';
import { SharedPoliteness } from './shared-politeness.js';
import type { Work } from './work.js';
import { hostKey, moveOn } from './work.js';

/** Hosts given up on that are remembered at once (each entry is small; a job may meet many). */
const MAX_REMEMBERED_HOSTS = 10_000;

export interface SchedulerOptions {
  concurrency: number;
  perHostConcurrency: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Failures in a row after which a host's remaining work gives up (or moves on). */
  maxHostFailures: number;
  /** Another session to a host opens only while it has more than this many ready items per open session. */
  itemsPerSession: number;
  /** Lease of a shared session slot (only with a shared coordination). */
  sessionLeaseMs: number;
}

export interface SchedulerHooks {
  /**
   * Runs one session on `queue`, ending it after the round trip in which `slot.lost` turns true.
   * Must never reject: it puts back what it could not finish.
   */
  runSession(queue: HostQueue, slot: HeldSlot): Promise<void>;
  /** `work` is finished without an answer from any host. */
  giveUp(work: Work, outcome: SmtpOutcome): void;
  /**
   * A host's remaining work was given up (blocked us, or failed `maxHostFailures` times in a row):
   * `given` is that work, `failures` the failures in a row.
   */
  hostGivenUp?(queue: HostQueue, failure: HostFailure, given: readonly Work[], failures: number): void;
  /** A session to `queue`'s host opened / ended (metrics). */
  sessionOpened?(queue: HostQueue): void;
  sessionClosed?(queue: HostQueue): void;
  /** A call to the shared coordination failed (the session waits and asks again). */
  coordinationFailed?(error: unknown, operation: string): void;
  now(): number;
  /** In [0, 1): the jitter of waits for a shared slot. Default Math.random. */
  random?(): number;
}

/** The slot of a session that needs none in a shared coordination: never lost. */
const OWN_SLOT: HeldSlot = { lost: false };

export class ProbeScheduler {
  readonly limiter: HostLimiter;
  readonly #options: SchedulerOptions;
  readonly #hooks: SchedulerHooks;
  readonly #queues = new Map<string, HostQueue>();
  /**
   * Hosts whose work was given up, with the failure and the end of the back-off then in force.
   * Work queued for such a host before that end (a later chunk of the same job, another job)
   * moves on or gives up at once instead of each call waiting out the back-off to fail again: a
   * dead host cost a 500,000-address job one back-off per chunk (3, 4, 8, 16 s... measured in
   * test/faults/mx-resets.test.ts). After the back-off the host gets one new try.
   */
  readonly #givenUp: TtlMap<string, HostFailure>;
  /** Open sessions, and sessions waiting for their shared slot. */
  readonly #sessions = new Set<Promise<void>>();
  readonly #shared: SharedPoliteness | null;
  #pumpScheduled = false;
  #timer: NodeJS.Timeout | null = null;
  #timerAt = Infinity;
  #closed = false;

  constructor(
    options: SchedulerOptions,
    hooks: SchedulerHooks,
    coordination: EngineCoordination | null = null,
  ) {
    this.#options = options;
    this.#hooks = hooks;
    this.limiter = new HostLimiter(options, () => hooks.now());
    this.#givenUp = new TtlMap(MAX_REMEMBERED_HOSTS, () => hooks.now());
    this.#shared =
      coordination === null
        ? null
        : new SharedPoliteness(
            coordination,
            {
              perHostConcurrency: options.perHostConcurrency,
              backoffBaseMs: options.backoffBaseMs,
              backoffMaxMs: options.backoffMaxMs,
              leaseMs: options.sessionLeaseMs,
            },
            {
              now: () => hooks.now(),
              random: () => (hooks.random ?? Math.random)(),
              changed: () => this.pump(),
              failed: (error, operation) => hooks.coordinationFailed?.(error, operation),
            },
          );
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Queues `work` at its current host address (`hostKey(work)`), held there until epoch ms
   * `notBefore` when that is later (an address whose shared greylist schedule says so).
   */
  enqueue(work: Work, front = false, notBefore = 0): void {
    const key = hostKey(work);
    const givenUp = this.limiter.activeFor(key) === 0 ? this.#givenUp.get(key) : undefined;
    if (givenUp !== undefined) {
      if (givenUp.kind !== 'blocked' && moveOn(work, connectionRefused(givenUp)))
        this.enqueue(work, false, notBefore);
      else this.#hooks.giveUp(work, outcomeOf(givenUp, work, this.limiter.failuresOf(key)));
      return;
    }
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = new HostQueue(key, work.hosts[work.hostIndex]!.exchange);
      this.#queues.set(key, queue);
    }
    if (notBefore > this.#hooks.now()) queue.delay(work, notBefore);
    else if (front) queue.pushFront([work]);
    else queue.push(work);
    this.pump();
  }

  /** Holds `work` at its host until epoch ms `at` (a greylisted recipient's next try). */
  delay(queue: HostQueue, work: Work, at: number): void {
    queue.delay(work, at);
    this.pump();
  }

  /** Drops every queued item for which `drop` is true (an aborted run's). */
  remove(drop: (work: Work) => boolean): void {
    for (const queue of this.#queues.values()) queue.remove(drop);
    this.pump();
  }

  /** A session got an answer about a recipient: the host's failure streak ends. A greeting alone does not. */
  hostAnswered(queue: HostQueue): void {
    this.limiter.succeeded(queue.key);
    this.#shared?.recordSuccess(queue.key);
  }

  /**
   * A session to `queue`'s host failed, at any stage: refused, 421, 4xx or 5xx where the dialogue
   * needed 2xx, closed, reset, silent, garbage. `unfinished` goes back to the front; `spent` (work
   * that rode `maxDrops` + 1 failed sessions) gives up, with the host's when that goes. The host is
   * backed off; when no other session to it is open, its ready work moves to each domain's next
   * MX; after `maxHostFailures` in a row (whatever is open) the rest gives up. A refusal of the
   * prober (`blocked`) gives everything up at once. A failure at QUIT (the server did not close)
   * only backs the host off: everything was answered. Called by the failing session before its
   * slot is released.
   */
  hostFailed(
    queue: HostQueue,
    failure: HostFailure,
    unfinished: readonly Work[],
    spent: readonly Work[] = [],
  ): void {
    const key = queue.key;
    this.limiter.failed(key);
    this.#shared?.recordFailure(key);
    if (failure.stage === 'quit') {
      this.pump();
      return;
    }
    if (failure.kind === 'blocked') {
      // A refusal of the prober itself holds for every recipient at this host.
      this.#giveUpHost(queue, failure, [...unfinished, ...spent, ...queue.drain()]);
      this.pump();
      return;
    }
    queue.pushFront(unfinished);
    const failures = this.limiter.failuresOf(key);
    const exhausted = failures >= this.#options.maxHostFailures;
    if (this.limiter.activeFor(key) <= 1 || exhausted) {
      const stay: Work[] = [];
      for (const work of queue.drainReady()) {
        if (moveOn(work, connectionRefused(failure))) this.enqueue(work);
        else stay.push(work);
      }
      queue.pushFront(stay);
    }
    if (exhausted) this.#giveUpHost(queue, failure, [...spent, ...queue.drain()]);
    else for (const work of spent) this.#hooks.giveUp(work, outcomeOf(failure, work));
    this.pump();
  }

  /** Settles `given` (all of `queue`'s work) with `failure` and remembers the host as given up. */
  #giveUpHost(queue: HostQueue, failure: HostFailure, given: readonly Work[]): void {
    const failures = this.limiter.failuresOf(queue.key);
    for (const work of given) this.#hooks.giveUp(work, outcomeOf(failure, work, failures));
    // Work queued for the host later (a later chunk, another job) gives up or moves on at once
    // until the back-off then in force ends; after it, the host gets one new try.
    const until = this.limiter.backedOffUntil(queue.key);
    if (until > 0) this.#givenUp.setUntil(queue.key, failure, until);
    if (given.length > 0) this.#hooks.hostGivenUp?.(queue, failure, given, failures);
  }

  /** Asks for a pump soon; many requests in one tick make one pump. */
  pump(): void {
    if (this.#pumpScheduled || this.#closed) return;
    this.#pumpScheduled = true;
    setImmediate(this.#pumpNow);
  }

  /** No new session opens; resolves when the open ones have ended. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await Promise.all([...this.#sessions]);
    await this.#shared?.drain();
  }

  #pumpNow = (): void => {
    this.#pumpScheduled = false;
    if (this.#closed) return;
    const now = this.#hooks.now();
    let wakeAt = Infinity;
    for (const [key, queue] of this.#queues) {
      queue.promote(now);
      if (queue.isEmpty) {
        // A session waiting for its shared slot still refers to this queue.
        if (this.limiter.activeFor(key) === 0 && this.limiter.pendingFor(key) === 0) {
          this.#queues.delete(key);
          this.#shared?.forget(key);
        }
        continue;
      }
      if (queue.readyCount === 0) {
        wakeAt = Math.min(wakeAt, queue.nextDueAt());
        continue;
      }
      const backedOff = this.limiter.backedOffUntil(key);
      if (backedOff > 0) {
        wakeAt = Math.min(wakeAt, backedOff);
        continue;
      }
      if (this.#shared === null) {
        while (queue.readyCount > 0 && this.limiter.canOpen(key) && this.#wantsAnother(queue)) {
          this.limiter.acquire(key);
          this.#start(queue, null);
        }
      } else if (this.limiter.pendingFor(key) === 0) {
        // One acquisition per host at a time; its end pumps again for the next one.
        const wait = this.#shared.waitUntil(key, now);
        if (wait > 0) wakeAt = Math.min(wakeAt, wait);
        else if (this.limiter.canOpen(key) && this.#wantsAnother(queue)) this.#acquire(queue, this.#shared);
      }
      if (queue.delayedCount > 0) wakeAt = Math.min(wakeAt, queue.nextDueAt());
    }
    this.#wakeAt(wakeAt, now);
  };

  #wantsAnother(queue: HostQueue): boolean {
    const open = this.limiter.activeFor(queue.key) + this.limiter.pendingFor(queue.key);
    return open === 0 || queue.readyCount > open * this.#options.itemsPerSession;
  }

  /** Reserves a session to `queue`'s host and asks for its shared slot; opens it when given one. */
  #acquire(queue: HostQueue, shared: SharedPoliteness): void {
    const key = queue.key;
    this.limiter.reserve(key);
    const acquiring: Promise<void> = shared
      .acquire(key)
      .then(async (lease) => {
        // While the answer came, the host may have failed, its work moved on, or the engine closed.
        const open =
          lease !== null && !this.#closed && queue.readyCount > 0 && this.limiter.backedOffUntil(key) === 0;
        this.limiter.endReservation(key, open);
        if (open) this.#start(queue, shared.hold(lease));
        else if (lease !== null) await shared.release(lease);
      })
      .finally(() => {
        this.#sessions.delete(acquiring);
        this.pump();
      });
    this.#sessions.add(acquiring);
  }

  /** Runs a session counted as opened in the limiter; `holding` is its shared slot, if any. */
  #start(queue: HostQueue, holding: SlotHolding | null): void {
    this.#hooks.sessionOpened?.(queue);
    const ran = this.#hooks.runSession(queue, holding?.slot ?? OWN_SLOT);
    // The shared slot goes back before the local count drops, so that this process's next
    // acquisition does not find it still taken.
    const ended = holding === null ? ran : ran.finally(() => holding.release());
    const session: Promise<void> = ended.finally(() => {
      this.limiter.release(queue.key);
      this.#hooks.sessionClosed?.(queue);
      this.#sessions.delete(session);
      this.pump();
    });
    this.#sessions.add(session);
  }

  #wakeAt(at: number, now: number): void {
    if (at === Infinity || at >= this.#timerAt) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        this.#timerAt = Infinity;
        this.pump();
      },
      Math.max(1, at - now),
    );
  }
}

/**
 * The outcome of work given up at a host after `failure`; `failures` (the host's failures in a
 * row) when the host itself was given up, which the evidence then says.
 */
function outcomeOf(failure: HostFailure, work: Work, failures = 0): SmtpOutcome {
  const blocked = failure.kind === 'blocked';
  const said = blocked ? (failure.reply?.message ?? failure.detail) : failure.detail;
  return {
    kind: failure.kind,
    catchAll: null,
    evidence: {
      host: work.hosts[work.hostIndex]?.exchange ?? null,
      code: failure.reply?.code ?? null,
      enhancedCode: failure.reply?.enhancedCode ?? null,
      message:
        blocked || failures === 0
          ? said
          : `host given up after ${failures} failure(s) in a row; last: ${said}`,
      tls: failure.tls,
      durationMs: 0,
    },
  };
}

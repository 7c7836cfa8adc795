/**
 * Decides when a session to which MX host opens. Work waits in one queue per host; whenever
 * something changes (work queued, a session ended, a delay or a back-off ran out) `pump` opens
 * sessions where the global and per-host caps allow and the host is not backed off. A host that
 * keeps failing hands its work to each domain's next MX, and finally gives it up with the
 * failure as evidence. One scheduler serves every `verifyMany` call of an engine, so the caps
 * hold across concurrent calls (jobs) too.
 */
import type { SmtpOutcome } from '../outcome.js';
import { HostLimiter } from './host-limiter.js';
import { HostQueue } from './host-queue.js';
import type { HostFailure } from './recipient-session.js';
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
}

export interface SchedulerHooks {
  /** Runs one session on `queue`. Must never reject: it puts back what it could not finish. */
  runSession(queue: HostQueue): Promise<void>;
  /** `work` is finished without an answer from any host. */
  giveUp(work: Work, outcome: SmtpOutcome): void;
  /** A host's remaining work was given up (blocked us, or failed `maxHostFailures` times in a row). */
  hostGivenUp?(queue: HostQueue, failure: HostFailure, addresses: number): void;
  /** A session to `queue`'s host opened / ended (metrics). */
  sessionOpened?(queue: HostQueue): void;
  sessionClosed?(queue: HostQueue): void;
  now(): number;
}

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
  readonly #givenUp = new Map<string, { failure: HostFailure; until: number }>();
  readonly #sessions = new Set<Promise<void>>();
  #pumpScheduled = false;
  #timer: NodeJS.Timeout | null = null;
  #timerAt = Infinity;
  #closed = false;

  constructor(options: SchedulerOptions, hooks: SchedulerHooks) {
    this.#options = options;
    this.#hooks = hooks;
    this.limiter = new HostLimiter(options, () => hooks.now());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Queues `work` at its current host address (`hostKey(work)`). */
  enqueue(work: Work, front = false): void {
    const key = hostKey(work);
    const givenUp = this.#givenUp.get(key);
    if (givenUp !== undefined) {
      if (givenUp.until > this.#hooks.now() && this.limiter.activeFor(key) === 0) {
        if (givenUp.failure.kind !== 'blocked' && moveOn(work, givenUp.failure.refused === true))
          this.enqueue(work);
        else this.#hooks.giveUp(work, outcomeOf(givenUp.failure, work));
        return;
      }
      if (givenUp.until <= this.#hooks.now()) this.#givenUp.delete(key);
    }
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = new HostQueue(key, work.hosts[work.hostIndex]!.exchange);
      this.#queues.set(key, queue);
    }
    if (front) queue.pushFront([work]);
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

  /** A session reached the host: its failure streak ends. */
  hostSucceeded(queue: HostQueue): void {
    this.limiter.succeeded(queue.key);
  }

  /**
   * A session to `queue`'s host failed (refused, 421, timed out, or blocked us). `unfinished`
   * goes back to the front. The host is backed off; when no other session to it is open, its
   * work moves to each domain's next MX, and after `maxHostFailures` in a row the rest gives up.
   * Called by the failing session before its slot is released.
   */
  hostFailed(queue: HostQueue, failure: HostFailure, unfinished: readonly Work[]): void {
    queue.lastFailure = failure;
    this.limiter.failed(queue.key);
    if (failure.kind === 'blocked') {
      // A refusal of the prober itself holds for every recipient at this host.
      const given = [...unfinished, ...queue.drain()];
      for (const work of given) this.#hooks.giveUp(work, outcomeOf(failure, work));
      this.#rememberGivenUp(queue.key, failure);
      this.#hooks.hostGivenUp?.(queue, failure, given.length);
      this.pump();
      return;
    }
    queue.pushFront(unfinished);
    if (this.limiter.activeFor(queue.key) <= 1) {
      const stay: Work[] = [];
      for (const work of queue.drainReady()) {
        if (moveOn(work, failure.refused === true)) this.enqueue(work);
        else stay.push(work);
      }
      queue.pushFront(stay);
      if (this.limiter.failuresOf(queue.key) >= this.#options.maxHostFailures) {
        const given = queue.drain();
        for (const work of given) this.#hooks.giveUp(work, outcomeOf(failure, work));
        this.#rememberGivenUp(queue.key, failure);
        if (given.length > 0) this.#hooks.hostGivenUp?.(queue, failure, given.length);
      }
    }
    this.pump();
  }

  #rememberGivenUp(key: string, failure: HostFailure): void {
    const until = this.limiter.backedOffUntil(key);
    if (until > 0) this.#givenUp.set(key, { failure, until });
    // Bounded like the limiter's own per-host state: the oldest entries go first.
    if (this.#givenUp.size > MAX_REMEMBERED_HOSTS) {
      const oldest = this.#givenUp.keys().next();
      if (!oldest.done) this.#givenUp.delete(oldest.value);
    }
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
  }

  #pumpNow = (): void => {
    this.#pumpScheduled = false;
    if (this.#closed) return;
    const now = this.#hooks.now();
    let wakeAt = Infinity;
    for (const [key, queue] of this.#queues) {
      queue.promote(now);
      if (queue.isEmpty) {
        if (this.limiter.activeFor(key) === 0) this.#queues.delete(key);
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
      while (queue.readyCount > 0 && this.limiter.canOpen(key) && this.#wantsAnother(queue)) {
        this.#start(queue);
      }
      if (queue.delayedCount > 0) wakeAt = Math.min(wakeAt, queue.nextDueAt());
    }
    this.#wakeAt(wakeAt, now);
  };

  #wantsAnother(queue: HostQueue): boolean {
    const open = this.limiter.activeFor(queue.key);
    return open === 0 || queue.readyCount > open * this.#options.itemsPerSession;
  }

  #start(queue: HostQueue): void {
    this.limiter.acquire(queue.key);
    this.#hooks.sessionOpened?.(queue);
    const session = this.#hooks.runSession(queue).finally(() => {
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

/** The outcome of work given up at a host after `failure`. */
export function outcomeOf(failure: HostFailure, work: Work): SmtpOutcome {
  const blocked = failure.kind === 'blocked';
  return {
    kind: failure.kind,
    catchAll: null,
    evidence: {
      host: work.hosts[work.hostIndex]?.exchange ?? null,
      code: failure.reply?.code ?? null,
      enhancedCode: failure.reply?.enhancedCode ?? null,
      message: blocked ? (failure.reply?.message ?? failure.detail) : failure.detail,
      tls: failure.tls,
      durationMs: 0,
    },
  };
}

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
 * Queues are per host (the address sessions connect to); politeness is per lane, an (egress,
 * host) pair (../egress/egress.ts): the per-host cap, back-off and failure streak hold for each
 * egress separately, new sessions go to the lane with the fewest open, and an egress that a host
 * refuses by policy rests for that host (`egressRestMs`) while the other egresses carry on. A
 * host is given up when every egress has failed `maxHostFailures` times in a row there or rests;
 * with one egress (the default) that is the host's own streak, as before egress pools.
 *
 * Given a coordination shared with other processes, a session to a host also needs one of the
 * host's slots in it, and the shared back-off (../sessions/shared-politeness.ts): N processes then open at
 * most `perHostConcurrency` sessions per host together. The global cap stays per process. Without
 * one, the caps and back-off are this process's alone (HostLimiter), with no asynchronous step
 * between deciding to open a session and opening it.
 *
 * Provider-wide politeness: a host whose MX name the provider table knows (../smtp/providers.ts)
 * is also in its provider's group, per egress: at most `providerConcurrency` sessions to all of
 * that provider's hosts at once and at most `providerSessionsPerSecond` opened in any second, in
 * this process (HostLimiter's groups) and, with a shared coordination, across processes (one
 * provider acquisition at a time per group, after the host's slot).
 *
 * Given the process's session broker (../sessions/broker.ts), the per-host and per-provider caps
 * are shared with the single verifications (they go first), so is the lanes' back-off (their
 * failures count in a lane's streak, and a lane backed off for either is for both), and work for a host goes first to
 * this engine's idle sessions there (`parked`), then to one group per idle single verification's
 * session, before a new session opens.
 */
import type { EngineCoordination } from '../coordination.js';
import type { SmtpOutcome } from '../outcome.js';
import type { Egress, EgressGate } from '../egress/egress.js';
import { egressesFor, pairKey, reaches, refusesTheClient, usableEgresses } from '../egress/egress.js';
import type { ConnectCandidate } from '../net/happy-eyeballs.js';
import { hasBothFamilies, interleaveFamilies } from '../net/happy-eyeballs.js';
import { isIPv6 } from 'node:net';
import { HostLimiter } from '../sessions/host-limiter.js';
import type { IdleSession, SessionBroker } from '../sessions/broker.js';
import type { Lane } from './host-queue.js';
import { HostQueue } from './host-queue.js';
import type { SmtpReply } from '../smtp/reply.js';
import type { HostFailure } from '../smtp/session.js';
import { connectionRefused } from '../smtp/session.js';
import { TtlMap } from '../ttl-map.js';
import type { HeldSlot, SlotHolding } from '../sessions/shared-politeness.js';
import { SharedPoliteness } from '../sessions/shared-politeness.js';
import type { Work } from './work.js';
import { hostKey, moveOn } from './work.js';
import { providerOfHost } from '../smtp/providers.js';

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
  /** The egress pool (../egress/egress.ts); at least one. */
  egresses: readonly Egress[];
  /** How long an egress refused by policy stays away from the host that refused it. */
  egressRestMs: number;
  /** Sessions to all the MX hosts of one mail provider at once, per egress. Absent: no cap. */
  providerConcurrency?: number;
  /** Sessions opened to one mail provider's MX hosts in any second, per egress. Absent: no pace. */
  providerSessionsPerSecond?: number;
  /** The reputation guard (../egress/egress-guard.ts): egresses it rests open no new sessions. */
  guard?: EgressGate | null;
  /**
   * The process's session broker (../sessions/broker.ts): the per-host and per-provider caps
   * shared with single verifications, and the idle sessions of both kinds.
   */
  broker?: SessionBroker | null;
  /** Happy Eyeballs tries a dual-stack host's IPv4 addresses first (default: IPv6 first). */
  preferIpv4?: boolean;
}

/**
 * Where a running session is counted in the limiter: its lane's (egress, host address) key at
 * first, the address that won the Happy Eyeballs race once connected (`connectedTo`).
 */
export interface SessionSeat {
  key: string;
  group: string | null;
  egress: Egress;
}

/** A host given up on: the failure, and the failures in a row of the lane that ended it. */
interface GivenUp {
  failure: HostFailure;
  failures: number;
}

export interface SchedulerHooks {
  /**
   * Runs one session on `queue`, ending it after the round trip in which `slot.lost` turns true.
   * Must never reject: it puts back what it could not finish.
   */
  runSession(lane: Lane, slot: HeldSlot, seat: SessionSeat): Promise<void>;
  /**
   * Runs one group of `lane`'s work on `idle`, an idle session a single verification opened
   * (the broker's), then gives it back to the broker. Must never reject. Absent: none borrowed.
   */
  runBorrowed?(lane: Lane, idle: IdleSession): Promise<void>;
  /** `work` is finished without an answer from any host. */
  giveUp(work: Work, outcome: SmtpOutcome): void;
  /**
   * A host's remaining work was given up (blocked us, or failed `maxHostFailures` times in a row):
   * `given` is that work, `failures` the failures in a row.
   */
  hostGivenUp?(lane: Lane, failure: HostFailure, given: readonly Work[], failures: number): void;
  /** A session on `lane` opened / ended (metrics). */
  sessionOpened?(lane: Lane): void;
  sessionClosed?(lane: Lane): void;
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
  readonly #givenUp: TtlMap<string, GivenUp>;
  /** Lanes resting after a policy refusal, until their rest ends (the refusal as evidence). */
  readonly #resting: TtlMap<string, HostFailure>;
  /** Open sessions, and sessions waiting for their shared slot. */
  readonly #sessions = new Set<Promise<void>>();
  /** This engine's sessions with no work left, idle in the broker (per host queue). */
  readonly #parked = new Map<HostQueue, Set<IdleSession>>();
  /** Single verifications' idle sessions carrying a group of a host's work now (per host queue). */
  readonly #borrowed = new Map<HostQueue, number>();
  readonly #shared: SharedPoliteness | null;
  #pumpScheduled = false;
  #timer: NodeJS.Timeout | null = null;
  #timerAt = Infinity;
  #closed = false;
  readonly #unsubscribe: () => void;

  constructor(
    options: SchedulerOptions,
    hooks: SchedulerHooks,
    coordination: EngineCoordination | null = null,
  ) {
    this.#options = options;
    this.#hooks = hooks;
    this.limiter = new HostLimiter(
      {
        ...options,
        // The lanes' back-off is the broker's: the single verifications record into it and consult it too.
        // So is the provider pace: the single verifications' new sessions count in it too.
        ...(options.broker == null ? {} : { backoff: options.broker.backoff, pace: options.broker.pace }),
      },
      () => hooks.now(),
      options.broker == null ? null : { broker: options.broker, as: 'batch' },
    );
    // A slot a single verification let go (or stopped waiting for) may be this engine's now.
    const unsubscribe = this.limiter.onSharedFree(() => this.pump());
    // One of this engine's sessions a single verification used is idle again: work may wait for it.
    const unwatch =
      options.broker?.onIdle((idle) => {
        if (this.#isParked(idle)) this.pump();
      }) ?? (() => undefined);
    this.#unsubscribe = () => {
      unsubscribe();
      unwatch();
    };
    this.#givenUp = new TtlMap(MAX_REMEMBERED_HOSTS, () => hooks.now());
    this.#resting = new TtlMap(MAX_REMEMBERED_HOSTS, () => hooks.now());
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
              ...(options.providerConcurrency === undefined
                ? {}
                : { providerConcurrency: options.providerConcurrency }),
              ...(options.providerSessionsPerSecond === undefined
                ? {}
                : { providerSessionsPerSecond: options.providerSessionsPerSecond }),
            },
            {
              now: () => hooks.now(),
              random: () => (hooks.random ?? Math.random)(),
              changed: () => this.pump(),
              failed: (error, operation) => hooks.coordinationFailed?.(error, operation),
            },
            // With the process's broker, its single verifications and other engines know it too.
            options.broker?.sharedLanes(coordination),
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
    let queue = this.#queues.get(key);
    const givenUp = queue === undefined || this.#openAt(queue) === 0 ? this.#givenUp.get(key) : undefined;
    if (givenUp !== undefined) {
      this.#passOn(work, givenUp, notBefore);
      return;
    }
    if (queue === undefined) {
      const created = new HostQueue(key, work.hosts[work.hostIndex]!.exchange);
      const host = work.hosts[work.hostIndex]!;
      created.hostAddresses = host.addresses;
      // The family whose DNS answer came late (RFC 8305 §3) joins the host's next races.
      if (host.lateAddresses !== undefined) {
        created.lateAddresses = host.lateAddresses.then((late) => {
          created.lateAddresses = null;
          const added = late.filter((address) => !created.hostAddresses.includes(address));
          if (added.length > 0) created.hostAddresses = [...created.hostAddresses, ...added];
          return added;
        });
      }
      const provider = this.#providerPoliteness() ? providerOfHost(created.exchange) : null;
      created.lanes = egressesFor(this.#options.egresses, key).map((egress) => ({
        queue: created,
        egress,
        key: pairKey(egress, key),
        sessionCap: Infinity,
        group: provider === null ? null : pairKey(egress, `provider:${provider}`),
      }));
      queue = created;
      this.#queues.set(key, queue);
    }
    if (notBefore > this.#hooks.now()) queue.delay(work, notBefore);
    else if (front) queue.pushFront([work]);
    else queue.push(work);
    this.pump();
  }

  /**
   * Whether `work`, refused on `lane` at RCPT by a policy about our address (`failure`), may be
   * asked through another egress: one that does not rest, and at most once per other egress of
   * the host. Counts it, and rests `lane` for the host (docs/batch-engine.md, "Egress pools"), so
   * that the work cannot come back to the egress that was just refused: a session still open on
   * the lane takes no more work (`rests`).
   */
  mayAskElsewhere(lane: Lane, work: Work, failure: HostFailure): boolean {
    const lanes = lane.queue.lanes;
    const refusals = work.egressRefusals ?? 0;
    if (refusals >= lanes.length - 1) return false;
    if (!lanes.some((each) => each !== lane && !this.#rests(each))) return false;
    if (!this.#rests(lane)) this.#rest(lane, failure);
    work.egressRefusals = refusals + 1;
    return true;
  }

  /** Whether `lane` rests for its host after a policy refusal: its sessions take no more work. */
  rests(lane: Lane): boolean {
    return this.#rests(lane);
  }

  /**
   * A session on `lane` with no work left waits idle in the broker (`idle`): the pump takes it
   * back when work for the host comes (unless a single verification took it first).
   */
  parked(lane: Lane, idle: IdleSession): void {
    let set = this.#parked.get(lane.queue);
    if (set === undefined) {
      set = new Set();
      this.#parked.set(lane.queue, set);
    }
    set.add(idle);
  }

  /** The session `idle` of `lane` is no longer idle for this engine (it goes on, or it ends). */
  unparked(lane: Lane, idle: IdleSession): void {
    const set = this.#parked.get(lane.queue);
    if (set === undefined) return;
    set.delete(idle);
    if (set.size === 0) this.#parked.delete(lane.queue);
  }

  #isParked(idle: IdleSession): boolean {
    for (const set of this.#parked.values()) if (set.has(idle)) return true;
    return false;
  }

  /** Tells the reputation guard of a reply the host gave `lane`'s egress (it counts blocks). */
  observe(lane: Lane, stage: HostFailure['stage'], reply: SmtpReply): void {
    this.#options.guard?.observe(lane.egress, lane.queue.exchange, stage, reply);
  }

  /** Queues `works` again at the front of their hosts (handed over by a session that ended). */
  requeue(works: readonly Work[]): void {
    for (const work of works) {
      // The session that hands them over may still count as open at a host given up meanwhile.
      const givenUp = this.#givenUp.get(hostKey(work));
      if (givenUp === undefined) this.enqueue(work, true);
      else this.#passOn(work, givenUp, 0);
    }
  }

  /** `work` for a host given up: to its next host when the failure allows, given up otherwise. */
  #passOn(work: Work, givenUp: GivenUp, notBefore: number): void {
    const { failure, failures } = givenUp;
    if (failure.kind !== 'blocked' && moveOn(work, connectionRefused(failure)))
      this.enqueue(work, false, notBefore);
    else this.#hooks.giveUp(work, outcomeOf(failure, work, failures));
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
  hostAnswered(lane: Lane): void {
    this.limiter.succeeded(lane.key);
    this.#shared?.recordSuccess(lane.key);
  }

  /**
   * A session on `lane` failed, at any stage: refused, 421, 4xx or 5xx where the dialogue
   * needed 2xx, closed, reset, silent, garbage. `unfinished` goes back to the front; `spent` (work
   * that rode `maxDrops` + 1 failed sessions) gives up, with the host's when that goes. The host is
   * backed off; when no other session to it is open, its ready work moves to each domain's next
   * MX; after `maxHostFailures` in a row on every lane (whatever is open) the rest gives up. A
   * refusal of the egress by policy (5.7.x, "too many connections from your address", a
   * blocklist) rests the lane while another egress can still reach the host, its work going back
   * to the queue; with none left, a refusal of the prober (`blocked`) gives everything up at once.
   * A failure at QUIT (the server did not close) only backs the lane off: everything was
   * answered. Called by the failing session before its slot is released.
   */
  hostFailed(
    lane: Lane,
    failure: HostFailure,
    unfinished: readonly Work[],
    spent: readonly Work[] = [],
  ): void {
    const { queue, key } = lane;
    if (failure.reply !== null) this.observe(lane, failure.stage, failure.reply);
    this.limiter.failed(key, failure);
    this.#shared?.recordFailure(key);
    if (failure.stage === 'quit') {
      this.pump();
      return;
    }
    const others = this.limiter.activeFor(key) - 1;
    if (failure.stage === 'banner' && failure.kind !== 'blocked' && others > 0 && refusedByPolicy(failure)) {
      // "421 too many connections from your address" while this egress had others open: the
      // host's limit per client address is below our cap. Keep to it rather than knock again.
      lane.sessionCap = Math.min(lane.sessionCap, others);
      queue.pushFront(unfinished);
      for (const work of spent) this.#hooks.giveUp(work, outcomeOf(failure, work));
      this.pump();
      return;
    }
    if (refusedByPolicy(failure) && this.#rest(lane, failure)) {
      // Another egress asks these recipients; the answer was about our address, not them.
      queue.pushFront(unfinished);
      for (const work of spent) this.#hooks.giveUp(work, outcomeOf(failure, work));
      this.pump();
      return;
    }
    if (failure.kind === 'blocked') {
      // A refusal of the prober itself holds for every recipient at this host.
      this.#giveUpHost(lane, failure, [...unfinished, ...spent, ...queue.drain()]);
      this.pump();
      return;
    }
    queue.pushFront(unfinished);
    const exhausted = queue.lanes.every(
      (each) => this.limiter.failuresOf(each.key) >= this.#options.maxHostFailures || this.#rests(each),
    );
    if (this.#openAt(queue) <= 1 || exhausted) {
      const stay: Work[] = [];
      for (const work of queue.drainReady()) {
        if (moveOn(work, connectionRefused(failure))) this.enqueue(work);
        else stay.push(work);
      }
      queue.pushFront(stay);
    }
    if (exhausted) this.#giveUpHost(lane, failure, [...spent, ...queue.drain()]);
    else for (const work of spent) this.#hooks.giveUp(work, outcomeOf(failure, work));
    this.pump();
  }

  /**
   * Rests `lane` after a policy refusal, unless it is the last lane of its host that does not
   * rest (then the refusal holds for the host, as with one egress). True when it rests.
   */
  #rest(lane: Lane, failure: HostFailure): boolean {
    const others = lane.queue.lanes.some((each) => each !== lane && !this.#rests(each));
    if (!others) return false;
    const until = this.#hooks.now() + this.#options.egressRestMs;
    this.limiter.restUntil(lane.key, until);
    this.#resting.setUntil(lane.key, failure, until);
    this.#shared?.restUntil(lane.key, until);
    return true;
  }

  /** Whether `lane` rests after a policy refusal. */
  #rests(lane: Lane): boolean {
    return this.#resting.get(lane.key) !== undefined;
  }

  /** Whether a provider cap or pace is set (without either, lanes have no group). */
  #providerPoliteness(): boolean {
    return (
      this.#options.providerConcurrency !== undefined || this.#options.providerSessionsPerSecond !== undefined
    );
  }

  /** Sessions open or being opened to `queue`'s host, over every egress. */
  #openAt(queue: HostQueue): number {
    let open = 0;
    for (const lane of queue.lanes)
      open += this.limiter.activeFor(lane.key) + this.limiter.pendingFor(lane.key);
    return open + queue.movedSessions + (this.#borrowed.get(queue) ?? 0);
  }

  /** Settles `given` (all of the host's work) with `failure` and remembers the host as given up. */
  #giveUpHost(lane: Lane, failure: HostFailure, given: readonly Work[]): void {
    const failures = this.limiter.failuresOf(lane.key);
    for (const work of given) this.#hooks.giveUp(work, outcomeOf(failure, work, failures));
    // Work queued for the host later (a later chunk, another job) gives up or moves on at once
    // until the back-off then in force ends; after it, the host gets one new try.
    const until = this.limiter.backedOffUntil(lane.key);
    if (until > 0) this.#givenUp.setUntil(lane.queue.key, { failure, failures }, until);
    if (given.length > 0) this.#hooks.hostGivenUp?.(lane, failure, given, failures);
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
    this.#unsubscribe();
    this.#shared?.close();
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    // Idle sessions end now; one a single verification uses ends when it comes back (no longer usable).
    const broker = this.#options.broker;
    for (const set of [...this.#parked.values()])
      for (const idle of [...set]) if (broker?.remove(idle) === true) idle.retire();
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
        if (this.#openAt(queue) === 0) {
          this.#queues.delete(key);
          for (const lane of queue.lanes) this.#shared?.forget(lane.key);
        }
        continue;
      }
      if (queue.readyCount === 0) {
        wakeAt = Math.min(wakeAt, queue.nextDueAt());
        continue;
      }
      // Work for the host: this engine's idle sessions there go on first, then the single
      // verifications' idle ones carry a group each (no new connection).
      this.#resume(queue);
      this.#borrow(queue);
      for (const lane of queue.lanes) {
        const backedOff = this.limiter.backedOffUntil(lane.key);
        if (backedOff > 0) wakeAt = Math.min(wakeAt, backedOff);
        const paced = lane.group == null ? 0 : this.limiter.groupPacedUntil(lane.group);
        if (paced > 0) wakeAt = Math.min(wakeAt, paced);
      }
      const shared = this.#shared;
      if (shared === null) {
        // Each new session goes out through the lane with the fewest open, so that the egresses
        // share the work evenly and each stays far from its own cap.
        for (let lane = this.#quietestLane(queue); lane !== null; lane = this.#quietestLane(queue)) {
          this.limiter.acquire(lane.key, lane.group ?? null);
          this.#start(lane, null);
        }
      } else {
        for (const lane of this.#usableLanes(queue)) {
          // One acquisition per lane at a time; its end pumps again for the next one.
          if (this.limiter.pendingFor(lane.key) > 0 || this.limiter.backedOffUntil(lane.key) > 0) continue;
          const group = lane.group ?? null;
          // One provider acquisition at a time per group, as per lane.
          if (group !== null && this.limiter.groupPending(group) > 0) continue;
          const wait = Math.max(
            shared.waitUntil(lane.key, now),
            group === null ? 0 : shared.waitUntil(group, now),
          );
          if (wait > 0) wakeAt = Math.min(wakeAt, wait);
          else if (
            this.limiter.activeFor(lane.key) < lane.sessionCap &&
            this.limiter.canOpen(lane.key, group) &&
            this.#winnerHasRoom(lane) &&
            this.#wantsAnother(queue)
          )
            this.#acquire(lane, shared);
        }
      }
      if (queue.delayedCount > 0) wakeAt = Math.min(wakeAt, queue.nextDueAt());
    }
    this.#wakeAt(wakeAt, now);
  };

  /** Takes this engine's idle sessions to `queue`'s host back from the broker: they carry its work on. */
  #resume(queue: HostQueue): void {
    const set = this.#parked.get(queue);
    const broker = this.#options.broker;
    if (set === undefined || broker == null) return;
    for (const idle of [...set]) if (broker.remove(idle)) idle.taken('batch');
  }

  /**
   * Takes an idle session a single verification opened, per lane of `queue`'s host that may be
   * asked now, for one group of its work: the connection stays counted as theirs, and comes back
   * to the idle sessions after one round trip, so a single verification never waits long for it.
   */
  #borrow(queue: HostQueue): void {
    const broker = this.#options.broker;
    const hooks = this.#hooks;
    if (broker == null || hooks.runBorrowed === undefined) return;
    for (const lane of queue.lanes) {
      if (queue.readyCount === 0) return;
      if (this.#rests(lane) || this.limiter.backedOffUntil(lane.key) > 0 || !broker.hasIdle(lane.key))
        continue;
      const idle = broker.takeIdle(lane.key, 'batch', (each) => each.openedBy === 'single');
      if (idle === null) continue;
      this.#borrowed.set(queue, (this.#borrowed.get(queue) ?? 0) + 1);
      const session: Promise<void> = hooks.runBorrowed(lane, idle).finally(() => {
        const left = (this.#borrowed.get(queue) ?? 1) - 1;
        if (left <= 0) this.#borrowed.delete(queue);
        else this.#borrowed.set(queue, left);
        this.#sessions.delete(session);
        this.pump();
      });
      this.#sessions.add(session);
    }
  }

  #wantsAnother(queue: HostQueue): boolean {
    const open = this.#openAt(queue);
    return open === 0 || queue.readyCount > open * this.#options.itemsPerSession;
  }

  /**
   * The lanes whose egress the reputation guard lets open sessions (../egress/egress.ts), among those
   * this host has not refused: when the host refused every egress in service, a resting one is
   * its last resort, as when every egress rests (work refused on one lane is never left waiting
   * for a lane that may not open).
   */
  #usableLanes(queue: HostQueue): readonly Lane[] {
    const guard = this.#options.guard;
    if (guard === null || guard === undefined) return queue.lanes;
    const here = queue.lanes.some((lane) => this.#rests(lane))
      ? queue.lanes.filter((lane) => !this.#rests(lane))
      : queue.lanes;
    return usableEgresses(guard, here.length > 0 ? here : queue.lanes, (lane) => lane.egress);
  }

  /** The lane a new session to `queue`'s host should use now (fewest open), or null for none. */
  #quietestLane(queue: HostQueue): Lane | null {
    if (queue.readyCount === 0 || !this.#wantsAnother(queue)) return null;
    let best: Lane | null = null;
    let bestOpen = Infinity;
    for (const lane of this.#usableLanes(queue)) {
      const open = this.limiter.activeFor(lane.key);
      if (
        open >= lane.sessionCap ||
        !this.limiter.canOpen(lane.key, lane.group ?? null) ||
        !this.#winnerHasRoom(lane)
      )
        continue;
      if (open < bestOpen) {
        best = lane;
        bestOpen = open;
      }
    }
    return best;
  }

  /** Reserves a session on `lane` and asks for its shared slot; opens it when given one. */
  #acquire(lane: Lane, shared: SharedPoliteness): void {
    const { queue, key } = lane;
    const group = lane.group ?? null;
    this.limiter.reserve(key, group);
    const acquiring: Promise<void> = shared
      .acquireLane(key, group)
      .then(async (leases) => {
        // While the answer came, the host may have failed, its work moved on, or the engine closed.
        const open =
          leases !== null && !this.#closed && queue.readyCount > 0 && this.limiter.backedOffUntil(key) === 0;
        this.limiter.endReservation(key, open, group);
        if (open) this.#start(lane, holdAll(leases.map((lease) => shared.hold(lease))));
        else if (leases !== null) await Promise.all(leases.map((lease) => shared.release(lease)));
      })
      .finally(() => {
        this.#sessions.delete(acquiring);
        this.pump();
      });
    this.#sessions.add(acquiring);
  }

  /**
   * The addresses a new session on `lane` races by Happy Eyeballs (../net/happy-eyeballs.ts), in
   * order, each with the source address of an egress that reaches its family: the host's
   * addresses of both families alternating, the family that won the host's last race first (else
   * IPv6, unless `preferIpv4`). Empty when the host has one family, or the lane goes through a
   * proxy (the proxy connects). Addresses given up on, or whose per-host cap is full, stay out
   * (the lane's own address always stays: its slot is the session's).
   */
  raceCandidates(lane: Lane): ConnectCandidate[] {
    const { queue } = lane;
    if (lane.egress.proxy !== null || !hasBothFamilies(queue.hostAddresses)) return [];
    const first = queue.firstAddress;
    const ipv6First = first === null ? this.#options.preferIpv4 !== true : isIPv6(first);
    const ordered = interleaveFamilies(
      first === null ? queue.hostAddresses : [first, ...queue.hostAddresses.filter((a) => a !== first)],
      ipv6First,
    );
    const out: ConnectCandidate[] = [];
    for (const address of ordered) {
      const egress = this.#egressTo(lane, address);
      if (
        address !== queue.key &&
        (this.#givenUp.get(address) !== undefined || !this.limiter.hostHasRoom(pairKey(egress, address)))
      )
        continue;
      out.push({ address, localAddress: egress.localAddress });
    }
    return out;
  }

  /**
   * The addresses of the family whose DNS answer had not come when the host's work was queued
   * (RFC 8305 §3), for a session on `lane` to race when they come; undefined when none are due
   * (or the lane goes through a proxy).
   */
  lateCandidates(lane: Lane): Promise<ConnectCandidate[]> | undefined {
    const late = lane.queue.lateAddresses;
    if (late === null || lane.egress.proxy !== null) return undefined;
    return late.then((added) =>
      added.flatMap((address) => {
        const egress = this.#egressTo(lane, address);
        return this.limiter.hostHasRoom(pairKey(egress, address))
          ? [{ address, localAddress: egress.localAddress }]
          : [];
      }),
    );
  }

  /**
   * A session on `lane` connected to `address` (it won the race): the host's next sessions try it
   * first, and the session's seat in the limiter (per-host cap, shared with single verifications)
   * moves to that address's lane. The session moves its shared (Redis) slot there too
   * (`HeldSlot.moveTo`), when one is free there.
   */
  connectedTo(lane: Lane, seat: SessionSeat, address: string): void {
    lane.queue.firstAddress = address;
    this.seatAt(lane, seat, address);
  }

  /**
   * Counts the session at `address` of its host from now on. A session that starts its race with
   * another address than its lane's (the last race's winner) is seated there before it connects,
   * so that sessions still connecting count where they will most likely be (the pump checked
   * that address's room).
   */
  seatAt(lane: Lane, seat: SessionSeat, address: string): void {
    const egress = this.#egressTo(lane, address);
    const key = pairKey(egress, address);
    if (key === seat.key) return;
    const provider = lane.group == null ? null : providerOfHost(lane.queue.exchange);
    const group = provider === null ? null : pairKey(egress, `provider:${provider}`);
    // The group's count moves only when the egress changed (its pace counts one start, not two).
    const movesGroup = group !== seat.group;
    this.limiter.acquire(key, movesGroup ? group : null);
    this.limiter.release(seat.key, movesGroup ? seat.group : null);
    // Still one of the queue's sessions (#openAt), though counted at another address.
    if (seat.key === lane.key) lane.queue.movedSessions += 1;
    else if (key === lane.key) lane.queue.movedSessions -= 1;
    Object.assign(seat, { key, group, egress });
  }

  /**
   * Whether the address a new session on `lane` will most likely reach (the last race's winner,
   * where the sessions that won it are counted) has room under the per-host cap.
   */
  #winnerHasRoom(lane: Lane): boolean {
    const first = lane.queue.firstAddress;
    if (first === null || first === lane.queue.key) return true;
    return this.limiter.hostHasRoom(pairKey(this.#egressTo(lane, first), first));
  }

  /** The lane's egress when it reaches `address`'s family, else the first of the pool's that does. */
  #egressTo(lane: Lane, address: string): Egress {
    return reaches(lane.egress, address) ? lane.egress : egressesFor(this.#options.egresses, address)[0]!;
  }

  /** Runs a session counted as opened in the limiter; `holding` is its shared slot, if any. */
  #start(lane: Lane, holding: SlotHolding | null): void {
    this.#hooks.sessionOpened?.(lane);
    const seat: SessionSeat = { key: lane.key, group: lane.group ?? null, egress: lane.egress };
    // Held for the connection's life, idle time in the broker included.
    const slot: HeldSlot =
      holding === null
        ? OWN_SLOT
        : {
            get lost() {
              return holding.slot.lost;
            },
            moveTo: (key) => holding.moveTo(key),
          };
    const ran = this.#hooks.runSession(lane, slot, seat);
    // The shared slot goes back before the local count drops, so that this process's next
    // acquisition does not find it still taken.
    const ended = holding === null ? ran : ran.finally(() => holding.release());
    const session: Promise<void> = ended.finally(() => {
      this.limiter.release(seat.key, seat.group);
      if (seat.key !== lane.key) lane.queue.movedSessions -= 1;
      this.#hooks.sessionClosed?.(lane);
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
 * Several held slots as one, the host's first: lost when any is lost, released together; a move
 * moves the host's (a provider's slot is the lane egress's, whichever address of its host won).
 */
function holdAll(holdings: readonly SlotHolding[]): SlotHolding {
  if (holdings.length === 1) return holdings[0]!;
  return {
    slot: {
      get lost() {
        return holdings.some((holding) => holding.slot.lost);
      },
    },
    moveTo: (key) => holdings[0]!.moveTo(key),
    release: async () => {
      await Promise.all(holdings.map((holding) => holding.release()));
    },
  };
}

/** A refusal of our address rather than of a recipient: the egress may rest and another ask. */
function refusedByPolicy(failure: HostFailure): boolean {
  return failure.kind === 'blocked' || (failure.reply !== null && refusesTheClient(failure.reply));
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

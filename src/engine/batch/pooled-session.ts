/**
 * One pooled SMTP session to one MX host: opened once, then MAIL FROM once per transaction and
 * many RCPTs, in groups of up to `pipelineDepth` per round trip when the server offers
 * PIPELINING (RSET and MAIL FROM ride in the same group), one per round trip otherwise. The
 * session stays under the server's limits: at most `recipientsPerTransaction` RCPTs before
 * RSET (fewer after a 452 4.5.3), `recipientsPerSession` in all, and at most
 * `maxRejectsPerSession` refused RCPTs (Postfix slows a client down after 10 and drops it after
 * 20); then it QUITs and the scheduler opens a fresh one if work is left.
 *
 * A recipient whose local part is not ASCII is written only in a session whose server offered
 * SMTPUTF8; elsewhere it settles as `unicode_unsupported` without an RCPT (smtputf8.ts), and
 * the session goes on with the others.
 *
 * Liveness (docs/batch-engine.md): every failure, at every stage (greeting, MAIL, RCPT, RSET,
 * QUIT), is reported to the scheduler, which backs the host off and gives it up after
 * `maxHostFailures` in a row; only an answer about a recipient ends a host's failure streak, so
 * a host that greets and then fails cannot hold work for ever. The greeting is session.ts's.
 *
 * With the process's session broker (../sessions/broker.ts), a session with no work left for its
 * host waits among the broker's idle sessions instead of QUITting (while single verifications
 * keep warm ones): the next single verification to its lane uses it, or the host's next work
 * takes it back. And a single verification's idle session carries one group of work
 * (`runBorrowedGroup`) before the scheduler opens a session of its own.
 */
import type { SmtpOutcome } from '../outcome.js';
import { classifyReply } from '../smtp/classify.js';
import { refusesTheClient } from '../egress/egress.js';
import type { SmtpReply } from '../smtp/reply.js';
import type { HostFailure, SessionStage, SmtpSession, StarttlsMode } from '../smtp/session.js';
import { describe, failureOf, openSession, stepDeadlines } from '../smtp/session.js';
import { addressNeedsSmtpUtf8, unicodeUnsupported } from '../smtp/smtputf8.js';
import type { CatchAllTracker } from './catch-all.js';
import type { Lane } from './host-queue.js';
import type { ProbeScheduler, SessionSeat } from './scheduler.js';
import { DEFAULT_CONNECTION_ATTEMPT_DELAY_MS } from '../net/happy-eyeballs.js';
import type { SharedGreylistSchedule } from './shared-greylist.js';
import type { HeldSlot } from '../sessions/shared-politeness.js';
import type { Work } from './work.js';
import type { IdleSession, SessionBroker } from '../sessions/broker.js';
import type { HeldReplies } from '../smtp/held-replies.js';

export interface PooledSessionOptions {
  port: number;
  /** Use PIPELINING when offered. */
  pipelining: boolean;
  mailFrom: string;
  stepTimeoutMs: number;
  pipelineDepth: number;
  recipientsPerTransaction: number;
  recipientsPerSession: number;
  maxRejectsPerSession: number;
  greylistRetries: number;
  greylistDelayMs: number;
  /** Sessions that may fail while carrying one item before it gives up. */
  maxDrops: number;
  /** STARTTLS (`--starttls`); default opportunistic. */
  starttls?: StarttlsMode;
  /** Happy Eyeballs' Connection Attempt Delay (default 250 ms). */
  connectAttemptDelayMs?: number;
  /** How much later than the first TLS ticket a reply counts as held (../smtp/held-replies.ts). */
  heldReplyMarginMs?: number;
}

export interface PooledSessionDeps {
  scheduler: ProbeScheduler;
  catchAll: CatchAllTracker;
  /** Where a greylisted recipient's next try is shared with other engines; null when nothing is shared. */
  greylist: SharedGreylistSchedule | null;
  now: () => number;
  /**
   * The process's session broker (../sessions/broker.ts): with no work left for its host, the
   * session waits among its idle sessions, for a single verification or this host's next work.
   */
  broker?: SessionBroker | null;
  /**
   * The hosts that hold their reply behind their TLS 1.3 session tickets (../smtp/held-replies.ts):
   * the broker's, shared with the single verifications, or the engine's own without one.
   */
  heldReplies?: HeldReplies;
}

// RFC 5321 §4.5.3.1.10: "too many recipients" is 452 (4.5.3); some servers send 552 5.5.3.
const TOO_MANY = /too many recipients/i;

function isTooManyRecipients(reply: SmtpReply): boolean {
  return (
    reply.enhancedCode === '4.5.3' ||
    reply.enhancedCode === '5.5.3' ||
    ((reply.code === 452 || reply.code === 552) && TOO_MANY.test(reply.message))
  );
}

interface SessionState {
  rejects: number;
  sent: number;
  inTransaction: number;
  acceptedInTransaction: number;
  transactionOpen: boolean;
  transactionLimit: number;
  /** Policy refusals (`blocked`) in a row, with no answer about a mailbox in between. */
  blockedInARow: number;
  /** The server answered about a recipient in this session (its host's failure streak ended). */
  answered: boolean;
  /** Recipients refused here by policy that another egress will ask, queued again at the end. */
  elsewhere: Work[];
}

/**
 * Policy refusals in a row after which the host is taken to refuse the prober itself (an RBL
 * check at RCPT, as Postfix's reject_rbl_client does): its queued addresses settle as
 * smtp_blocked with that reply, instead of one session after another collecting refusals.
 */
const BLOCKED_IN_A_ROW = 3;

/**
 * Runs one session on `lane` (a host's queue, through one egress: its source address or proxy
 * and its HELO name) until its work or its limits run out, or until its shared `slot`
 * is lost (the session then ends after its round trip). Never rejects; resolves once the server
 * no longer counts the connection.
 */
export async function runPooledSession(
  lane: Lane,
  slot: HeldSlot,
  options: PooledSessionOptions,
  deps: PooledSessionDeps,
  seat: SessionSeat = { key: lane.key, group: lane.group ?? null, egress: lane.egress },
): Promise<void> {
  // A host with addresses of both families is raced by Happy Eyeballs (../net/happy-eyeballs.ts),
  // as a single verification's: a family whose connects hang costs the Connection Attempt Delay.
  const race = deps.scheduler.raceCandidates(lane);
  const [first, ...alternates] =
    race.length > 0 ? race : [{ address: lane.queue.key, localAddress: lane.egress.localAddress }];
  if (first!.address !== lane.queue.key) deps.scheduler.seatAt(lane, seat, first!.address);
  // The family whose DNS answer is still to come joins the race when it comes (RFC 8305 §3).
  const late = deps.scheduler.lateCandidates(lane);
  const opened = await openSession(
    { exchange: lane.queue.exchange, address: first!.address },
    {
      port: options.port,
      heloName: lane.egress.heloName,
      proxy: lane.egress.proxy,
      localAddress: first!.localAddress,
      deadlines: stepDeadlines(options.stepTimeoutMs),
      starttls: options.starttls ?? 'opportunistic',
      ...(deps.heldReplies === undefined ? {} : { heldReplies: deps.heldReplies }),
      ...(options.heldReplyMarginMs === undefined ? {} : { heldReplyMarginMs: options.heldReplyMarginMs }),
      ...(alternates.length === 0 && late === undefined
        ? {}
        : {
            alternates,
            ...(late === undefined ? {} : { lateAlternates: late }),
            attemptDelayMs: options.connectAttemptDelayMs ?? DEFAULT_CONNECTION_ATTEMPT_DELAY_MS,
          }),
    },
  );
  // The session's seat in the per-host cap follows the address that connected.
  const connectedTo = opened.ok ? opened.session.target.address : opened.connectedTo;
  if ((race.length > 0 || late !== undefined) && connectedTo !== undefined)
    deps.scheduler.connectedTo(lane, seat, connectedTo);
  if (!opened.ok) {
    deps.scheduler.hostFailed(lane, opened.failure, []);
    await opened.closed;
    return;
  }
  // Other processes count the session where it connected too, when a shared slot is free there
  // (else it stays counted at the lane's address, as the pump asked for).
  await slot.moveTo?.(seat.key);
  const session = opened.session;
  const state: SessionState = {
    rejects: 0,
    sent: 0,
    inTransaction: 0,
    acceptedInTransaction: 0,
    transactionOpen: false,
    transactionLimit: Math.min(options.recipientsPerTransaction, lane.queue.transactionLimit),
    blockedInARow: 0,
    answered: false,
    elsewhere: [],
  };
  let batch: Work[] = [];
  let failed = false;
  const openedAt = performance.now();
  for (;;) {
    try {
      // A lane refused by policy rests for the host: what is left there goes out through another egress.
      while (session.usable && !deps.scheduler.closed && !slot.lost && !deps.scheduler.rests(lane)) {
        const window = nextWindow(session, state, options);
        if (window <= 0) break;
        const taken = lane.queue.take(window);
        if (taken.length === 0) break;
        batch = session.extensions.smtpUtf8 ? taken : settleUnwritable(taken, session, deps);
        if (batch.length === 0) continue;
        const after = await runGroup(session, lane, batch, state, options, deps);
        batch = [];
        if (after === 'failed') failed = true;
        if (after !== 'go on') break;
      }
    } catch (error) {
      // A bug, not a network failure: put the work back so that no address is lost, and let the
      // host's failure streak bound the retries.
      const detail = error instanceof Error ? error.message : String(error);
      failed = true;
      session.destroy();
      deps.scheduler.hostFailed(
        lane,
        { kind: 'unavailable', stage: 'rcpt', cause: 'destroyed', reply: null, detail, tls: session.tls },
        batch,
      );
    }
    // Queued again once this session has left them (the host may have been given up meanwhile).
    deps.scheduler.requeue(state.elsewhere.splice(0));
    // No work left for the host: the session waits idle in the broker, still this batch's (its
    // counts, its shared slots), for a single verification to its lane or the host's next work.
    const broker = deps.broker;
    if (
      failed ||
      broker == null ||
      slot.lost ||
      deps.scheduler.closed ||
      !session.usable ||
      deps.scheduler.rests(lane) ||
      lane.queue.readyCount > 0 ||
      state.sent >= options.recipientsPerSession ||
      state.rejects >= options.maxRejectsPerSession ||
      !broker.wantsIdle(seat.key, state.rejects)
    )
      break;
    const next = await keepIdle(lane, seat, session, state, openedAt, slot, broker, deps);
    if (next === 'retire') break;
    // Its work goes on in a new transaction (a single verification may have used the session).
    session.useDeadlines(stepDeadlines(options.stepTimeoutMs));
    state.transactionOpen = true;
    state.inTransaction = state.transactionLimit;
  }
  const tls = session.tls;
  const closed = await session.quit();
  // A server that does not close after QUIT holds the session open: it counts against the host
  // (backs it off) even though its recipients were answered.
  if (closed === 'timeout' && !failed) {
    deps.scheduler.hostFailed(
      lane,
      {
        kind: 'timeout',
        stage: 'quit',
        cause: 'timeout',
        reply: null,
        detail: 'quit: the server did not close the connection',
        tls,
      },
      [],
    );
  }
}

/**
 * Runs one group of `lane`'s work on `idle`, an idle session a single verification opened (the
 * broker's: its counts and shared slots stay the single verifications'), then gives it back to the
 * broker's idle sessions, or retires it after a failure or at its bounds. One group, one round trip
 * with PIPELINING: a single verification that wants the session back waits about that long.
 * Never rejects.
 */
export async function runBorrowedGroup(
  lane: Lane,
  idle: IdleSession,
  broker: SessionBroker,
  options: PooledSessionOptions,
  deps: PooledSessionDeps,
): Promise<void> {
  const session = idle.session;
  session.useDeadlines(stepDeadlines(options.stepTimeoutMs));
  const transactionLimit = Math.min(options.recipientsPerTransaction, lane.queue.transactionLimit);
  const state: SessionState = {
    rejects: idle.rejects,
    sent: 0,
    // The single verification's transaction is reset first.
    inTransaction: transactionLimit,
    acceptedInTransaction: 0,
    transactionOpen: true,
    transactionLimit,
    blockedInARow: 0,
    answered: false,
    elsewhere: [],
  };
  let after: GroupEnd = 'end';
  let batch: Work[] = [];
  try {
    const window = nextWindow(session, state, options);
    if (window > 0 && session.usable) {
      const taken = lane.queue.take(window);
      batch = session.extensions.smtpUtf8 ? taken : settleUnwritable(taken, session, deps);
      if (batch.length > 0) after = await runGroup(session, lane, batch, state, options, deps);
    }
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    after = 'failed';
    session.destroy();
    deps.scheduler.hostFailed(
      lane,
      { kind: 'unavailable', stage: 'rcpt', cause: 'destroyed', reply: null, detail, tls: session.tls },
      batch,
    );
  }
  deps.scheduler.requeue(state.elsewhere);
  idle.rejects = state.rejects;
  idle.verifications += 1;
  if (after === 'failed' || !idle.usable() || state.rejects >= options.maxRejectsPerSession) idle.retire();
  else broker.giveBack(idle);
}

/**
 * Keeps the session idle in the broker until this batch takes it back for work at its host
 * (`resume`) or it is to end (`retire`: its idle time ran out, a single verification that used it
 * retired it, the engine closes, or the server let it go). A single verification may use it in
 * between; its refused commands count towards the session's bound.
 */
function keepIdle(
  lane: Lane,
  seat: SessionSeat,
  session: SmtpSession,
  state: SessionState,
  openedAt: number,
  slot: HeldSlot,
  broker: SessionBroker,
  deps: PooledSessionDeps,
): Promise<'resume' | 'retire'> {
  return new Promise((resolve) => {
    let done = false;
    const idle: IdleSession = {
      key: seat.key,
      group: seat.group,
      address: session.target.address,
      egress: seat.egress,
      session,
      openedBy: 'batch',
      openedAt,
      greetMs: 0,
      // It carried transactions: a single verification starts with RSET.
      verifications: 1,
      rejects: state.rejects,
      usable: () => session.usable && !slot.lost && !deps.scheduler.closed && !deps.scheduler.rests(lane),
      retire: () => finish('retire'),
      taken: (by) => {
        if (by === 'batch') finish('resume');
      },
    };
    function finish(next: 'resume' | 'retire'): void {
      if (done) return;
      done = true;
      deps.scheduler.unparked(lane, idle);
      broker.remove(idle);
      state.rejects = idle.rejects;
      resolve(next);
    }
    void session.closed.then(() => finish('retire'));
    deps.scheduler.parked(lane, idle);
    broker.keepForSingles(idle);
  });
}

/** Whether groups go out in one write: the server offers PIPELINING and we may use it. */
function pipelined(session: SmtpSession, options: PooledSessionOptions): boolean {
  return options.pipelining && session.extensions.pipelining;
}

/**
 * Settles the items this session cannot write (local part not ASCII, no SMTPUTF8 offered) and
 * returns the rest. The first host that greets decides, as in the single probe: no next MX.
 */
function settleUnwritable(batch: Work[], session: SmtpSession, deps: PooledSessionDeps): Work[] {
  const writable: Work[] = [];
  for (const work of batch) {
    if (!addressNeedsSmtpUtf8(work.address)) writable.push(work);
    else giveUp(work, unicodeUnsupported(work.hosts[work.hostIndex]!.exchange, session.tls, 0), deps);
  }
  return writable;
}

/** How many RCPTs the next group may carry. */
function nextWindow(session: SmtpSession, state: SessionState, options: PooledSessionOptions): number {
  const rejectsLeft = options.maxRejectsPerSession - state.rejects;
  const sessionLeft = options.recipientsPerSession - state.sent;
  // A full transaction is reset by the next group, which then starts a new one.
  const transactionLeft =
    state.inTransaction >= state.transactionLimit
      ? state.transactionLimit
      : state.transactionLimit - state.inTransaction;
  // Every RCPT of a group may be refused, so a group never holds more than the rejects left.
  const depth = pipelined(session, options) ? options.pipelineDepth : 1;
  return Math.min(depth, rejectsLeft, sessionLeft, transactionLeft);
}

/** What the session does after a group: go on, end (limits, a decided refusal), or end as failed. */
type GroupEnd = 'go on' | 'end' | 'failed';

/**
 * Sends one group (RSET and MAIL FROM when needed, then the batch's RCPTs) and settles or
 * re-queues every item of the batch.
 */
async function runGroup(
  session: SmtpSession,
  lane: Lane,
  batch: Work[],
  state: SessionState,
  options: PooledSessionOptions,
  deps: PooledSessionDeps,
): Promise<GroupEnd> {
  const prefix: string[] = [];
  if (state.transactionOpen && state.inTransaction >= state.transactionLimit) {
    prefix.push('RSET');
    state.transactionOpen = false;
  }
  if (!state.transactionOpen) {
    // One transaction carries many recipients, some perhaps with UTF-8 local parts: ask for
    // SMTPUTF8 (RFC 6531) whenever the server offers it, which is harmless for ASCII ones.
    prefix.push(`MAIL FROM:<${options.mailFrom}>${session.extensions.smtpUtf8 ? ' SMTPUTF8' : ''}`);
    state.inTransaction = 0;
    state.acceptedInTransaction = 0;
  }
  const lines = [...prefix, ...batch.map((work) => `RCPT TO:<${work.address}>`)];
  const startedAt = performance.now();
  const { replies, error } = await session.send(
    lines,
    pipelined(session, options),
    (reply, i) => i < prefix.length && reply.code >= 300,
  );
  const durationMs = Math.round(performance.now() - startedAt);

  for (let i = 0; i < prefix.length; i++) {
    const reply = replies[i];
    const stage: SessionStage = prefix[i] === 'RSET' ? 'rset' : 'mail';
    if (reply === undefined) {
      const failure = error === null ? noReply(stage, session.tls) : failureOf(error, stage, session.tls);
      return sessionFailed(lane, batch, failure, options, deps);
    }
    if (stage === 'rset') {
      if (reply.code >= 300)
        return sessionFailed(
          lane,
          batch,
          replyFailure('unavailable', stage, reply, session.tls),
          options,
          deps,
        );
      continue;
    }
    const verdict = classifyReply('mail', reply);
    if (verdict === 'continue') {
      state.transactionOpen = true;
      continue;
    }
    if (verdict === 'greylisted') {
      // A temporary refusal of the sender: each recipient waits for its next try, as when
      // greylisted, and the host is backed off like any host that fails.
      for (const work of batch)
        settleReply(lane, work, 'greylisted', reply, session.tls, durationMs, options, deps);
      deps.scheduler.hostFailed(lane, replyFailure('greylisted', stage, reply, session.tls), []);
      return 'failed';
    }
    const kind = verdict === 'blocked' ? 'blocked' : 'unavailable';
    return sessionFailed(lane, batch, replyFailure(kind, stage, reply, session.tls), options, deps);
  }

  const retryInNewTransaction: Work[] = [];
  for (let b = 0; b < batch.length; b++) {
    const work = batch[b]!;
    const reply = replies[prefix.length + b];
    if (reply === undefined) {
      lane.queue.pushFront(retryInNewTransaction);
      const failure = error === null ? noReply('rcpt', session.tls) : failureOf(error, 'rcpt', session.tls);
      return sessionFailed(lane, batch.slice(b), failure, options, deps);
    }
    state.sent += 1;
    state.inTransaction += 1;
    if (reply.code >= 300) state.rejects += 1;
    // The server's per-transaction limit: retry in a new transaction, and keep to that limit.
    // A server that says so with nothing accepted yet has no usable limit: that answer is
    // classified like any other 4xx (greylisted, tried again later, bounded).
    if (isTooManyRecipients(reply) && state.acceptedInTransaction > 0) {
      state.transactionLimit = state.acceptedInTransaction;
      // Kept for the host's next sessions, which would otherwise each spend a reject to learn it.
      lane.queue.transactionLimit = Math.min(lane.queue.transactionLimit, state.acceptedInTransaction);
      retryInNewTransaction.push(work);
      continue;
    }
    const verdict = classifyReply('rcpt', reply);
    if (verdict === 'continue' || verdict === 'next_host') {
      // 421 (going away) or a reply that breaks the dialogue: this host cannot answer now.
      lane.queue.pushFront(retryInNewTransaction);
      const failure = replyFailure('unavailable', 'rcpt', reply, session.tls);
      return sessionFailed(lane, batch.slice(b), failure, options, deps);
    }
    if (!state.answered) {
      state.answered = true;
      deps.scheduler.hostAnswered(lane);
    }
    if (verdict === 'accepted') state.acceptedInTransaction += 1;
    // Only refusals of our address count towards "the host refuses the prober"; a bare 550 the
    // reply table does not know (blocked: could not find out) may be a server refusing unknown
    // users tersely, and must not settle the whole queue. It neither counts nor ends the streak.
    const policy = refusesTheClient(reply);
    if (policy) deps.scheduler.observe(lane, 'rcpt', reply);
    state.blockedInARow = policy
      ? state.blockedInARow + 1
      : verdict === 'greylisted' || verdict === 'blocked'
        ? state.blockedInARow
        : 0;
    // About our address, not the recipient: while another egress may ask, that one does.
    if (
      policy &&
      deps.scheduler.mayAskElsewhere(lane, work, replyFailure('blocked', 'rcpt', reply, session.tls))
    )
      state.elsewhere.push(work);
    else settleReply(lane, work, verdict, reply, session.tls, durationMs, options, deps);
    if (state.blockedInARow >= BLOCKED_IN_A_ROW) {
      const failure = replyFailure('blocked', 'rcpt', reply, session.tls);
      deps.scheduler.hostFailed(lane, failure, [...retryInNewTransaction, ...batch.slice(b + 1)]);
      return 'failed';
    }
  }
  if (retryInNewTransaction.length > 0) {
    lane.queue.pushFront(retryInNewTransaction);
    state.inTransaction = Math.max(state.inTransaction, state.transactionLimit);
  }
  return state.rejects < options.maxRejectsPerSession ? 'go on' : 'end';
}

/** Settles (or delays, when greylisted) one item by its RCPT reply. */
function settleReply(
  lane: Lane,
  work: Work,
  verdict: Exclude<ReturnType<typeof classifyReply>, 'continue' | 'next_host'>,
  reply: SmtpReply,
  tls: boolean,
  durationMs: number,
  options: PooledSessionOptions,
  deps: PooledSessionDeps,
): void {
  if (work.kind === 'catch-all') {
    deps.catchAll.decide(work.domain, verdict === 'accepted' ? true : verdict === 'rejected' ? false : null);
    return;
  }
  if (verdict === 'greylisted') {
    // Shared even after the last try: the server must not be asked again before the delay, by
    // this run or any other.
    const retryAt = deps.now() + options.greylistDelayMs;
    deps.greylist?.record(work, retryAt, work.greylistTries + 1);
    if (work.greylistTries < options.greylistRetries) {
      work.greylistTries += 1;
      deps.scheduler.delay(lane.queue, work, retryAt);
      return;
    }
  } else deps.greylist?.answered(work);
  const evidence = {
    host: work.hosts[work.hostIndex]!.exchange,
    code: reply.code,
    enhancedCode: reply.enhancedCode,
    message: reply.message,
    tls,
    durationMs,
  };
  if (verdict === 'accepted') {
    deps.catchAll.whenDecided(work.domain, (catchAll) =>
      work.run.settle(work, { kind: 'accepted', catchAll, evidence }),
    );
    return;
  }
  work.run.settle(work, { kind: verdict, catchAll: null, evidence });
}

/**
 * The session failed before these items were answered. A refusal of the prober (`blocked`) holds
 * for all of them; otherwise each goes back to the front, or gives up once it has ridden
 * `maxDrops` + 1 failed sessions. Either way the host is charged the failure.
 */
function sessionFailed(
  lane: Lane,
  unanswered: readonly Work[],
  failure: HostFailure,
  options: PooledSessionOptions,
  deps: PooledSessionDeps,
): 'failed' {
  if (failure.kind === 'blocked') {
    deps.scheduler.hostFailed(lane, failure, unanswered);
    return 'failed';
  }
  const retry: Work[] = [];
  const spent: Work[] = [];
  for (const work of unanswered) {
    work.drops += 1;
    (work.drops <= options.maxDrops ? retry : spent).push(work);
  }
  deps.scheduler.hostFailed(lane, failure, retry, spent);
  return 'failed';
}

function replyFailure(
  kind: HostFailure['kind'],
  stage: SessionStage,
  reply: SmtpReply,
  tls: boolean,
): HostFailure {
  return { kind, stage, cause: 'reply', reply, detail: `${stage}: ${describe(reply)}`, tls };
}

/** A group whose reply is missing although the connection did not fail (cannot happen; bounded anyway). */
function noReply(stage: SessionStage, tls: boolean): HostFailure {
  return { kind: 'unavailable', stage, cause: 'protocol', reply: null, detail: `${stage}: no reply`, tls };
}

function giveUp(work: Work, outcome: SmtpOutcome, deps: PooledSessionDeps): void {
  if (work.kind === 'catch-all') deps.catchAll.decide(work.domain, null);
  else work.run.settle(work, outcome);
}

/**
 * The transaction of one single verification on an open session (../probe.ts): [RSET on a session
 * that carried one before,] MAIL FROM, RCPT TO and, when the domain's catch-all answer is not
 * known, a second RCPT of an improbable address, in one write when the server offers PIPELINING
 * (RFC 2920), one command per round trip otherwise; and what its replies mean for the probe.
 */
import type { ReplyVerdict } from './classify.js';
import { classifyReply } from './classify.js';
import { SmtpConnectionError } from './connection.js';
import type { SmtpReply } from './reply.js';
import type { HostFailure, SessionStage, SmtpSession } from './session.js';
import { describe, failureOf } from './session.js';

export type DecidedKind = Exclude<ReplyVerdict, 'continue' | 'next_host'>;

/** What one session with one host concluded. */
export type HostResult =
  /** A reply decided; `stage` says whether it was about the recipient (rcpt) or the prober. */
  | {
      type: 'decided';
      stage: SessionStage;
      kind: DecidedKind;
      reply: SmtpReply;
      catchAll: boolean | null;
      tls: boolean;
    }
  /** The address needs SMTPUTF8 and the host did not offer it: decided without asking. */
  | { type: 'unicode_unsupported'; tls: boolean }
  /** `queued`: no session could be had within the budget (our own cap): not the host's failure. */
  | { type: 'failed'; failure: HostFailure; queued?: true };

/** The command lines of one verification's group. */
export interface TransactionLines {
  reset: boolean;
  mailFrom: string;
  rcpt: string;
  /** The catch-all RCPT, or null when the domain's answer is cached. */
  probe: string | null;
}

/**
 * [RSET on a warm session,] MAIL FROM (with SMTPUTF8 when the address needs it, which the
 * server then offers), RCPT TO and, when the domain's catch-all answer is not cached, a second
 * RCPT: in one round trip when the server offers PIPELINING.
 */
export async function runTransaction(
  session: SmtpSession,
  group: TransactionLines,
  cached: boolean | null,
  remember: (catchAll: boolean | null) => void,
): Promise<Transaction> {
  const { reset, mailFrom, rcpt, probe } = group;
  const lines = [...(reset ? ['RSET'] : []), mailFrom, rcpt, ...(probe === null ? [] : [probe])];
  const first = reset ? 1 : 0;

  // RFC 2920: the whole group goes in one packet, saving a round trip per command. The second
  // RCPT is sent even if the first is refused; its answer is then simply not used.
  const issued: Promise<SmtpReply>[] = session.extensions.pipelining ? session.pipeline(lines) : [];
  const pipelined = issued.length > 0;
  const reply = (i: number): Promise<SmtpReply> => {
    if (pipelined) return issued[i]!;
    const pending = session.command(lines[i]!);
    pending.catch(() => undefined);
    issued.push(pending);
    return pending;
  };
  const decide = async (): Promise<HostResult> => {
    let stage: SessionStage = reset ? 'rset' : 'mail';
    try {
      if (reset) {
        const reply0 = await reply(0);
        if (reply0.code >= 300) return replyFailed('rset', reply0, session.tls);
      }
      stage = 'mail';
      const mail = await reply(first);
      const mailVerdict = classifyReply('mail', mail);
      if (mailVerdict !== 'continue') return stop(mailVerdict, mail, session.tls, 'mail');

      stage = 'rcpt';
      const recipient = await reply(first + 1);
      const verdict = classifyReply('rcpt', recipient);
      if (verdict !== 'accepted') return stop(verdict, recipient, session.tls, 'rcpt');

      let catchAll = cached;
      if (probe !== null) {
        catchAll = await catchAllAnswer(pipelined ? issued[first + 2]! : reply(first + 2));
        remember(catchAll);
      }
      return {
        type: 'decided',
        stage: 'rcpt',
        kind: 'accepted',
        reply: recipient,
        catchAll,
        tls: session.tls,
      };
    } catch (error) {
      if (!(error instanceof SmtpConnectionError)) throw error;
      return { type: 'failed', failure: failureOf(error, stage, session.tls) };
    }
  };
  const result = await decide();
  // Refused commands count against the session's reject budget, once all their replies are in.
  const settled = Promise.allSettled(issued).then(
    (all) => all.filter((r) => r.status === 'fulfilled' && r.value.code >= 400).length,
  );
  return { result, settled };
}

/** A verification's result, and (later) how many of its commands were refused. */
export interface Transaction {
  result: HostResult;
  settled: Promise<number>;
}

/** A warm session's first reply (to RSET, or MAIL when none) says the server had let it go: closed, or 421. */
export function serverLetGo(result: HostResult, first: SessionStage): boolean {
  if (result.type !== 'failed' || result.failure.stage !== first) return false;
  const { cause, reply } = result.failure;
  return cause === 'closed' || cause === 'protocol' || (reply !== null && reply.code === 421);
}

/** No session could be had before the deadline: the per-host cap was full (or the prober closed). */
export function queueTimeout(closing: boolean): HostResult {
  return {
    type: 'failed',
    queued: true,
    failure: {
      kind: closing ? 'unavailable' : 'timeout',
      stage: 'connect',
      cause: closing ? 'destroyed' : 'timeout',
      reply: null,
      detail: closing
        ? 'connect: the prober is closing'
        : 'connect: no session to the host came free within the time budget (per-host session cap)',
      tls: false,
    },
  };
}

export function replyFailed(stage: SessionStage, reply: SmtpReply, tls: boolean): HostResult {
  return {
    type: 'failed',
    failure: {
      kind: 'unavailable',
      stage,
      cause: 'reply',
      reply,
      detail: `${stage}: ${describe(reply)}`,
      tls,
    },
  };
}

/** True/false when the random address was accepted/refused as unknown; null when unclear. */
async function catchAllAnswer(pending: Promise<SmtpReply>): Promise<boolean | null> {
  try {
    const reply = await pending;
    const verdict = classifyReply('rcpt', reply);
    if (verdict === 'accepted') return true;
    if (verdict === 'rejected') return false;
    return null;
  } catch {
    // The real recipient's answer is decided; a lost second answer only leaves catch-all open.
    return null;
  }
}

export function stop(
  verdict: ReplyVerdict,
  reply: SmtpReply,
  tls: boolean,
  stage: 'mail' | 'rcpt',
): HostResult {
  // 'continue' cannot reach here (each caller goes on when it gets it); treat it as a host fault.
  if (verdict === 'next_host' || verdict === 'continue') return replyFailed(stage, reply, tls);
  return { type: 'decided', stage, kind: verdict, reply, catchAll: null, tls };
}

/**
 * Reply → outcome: the table that turns what an MTA said into what the probe concludes, in the
 * spirit of graphile-worker's SQLSTATE table (transient vs permanent, decided in one place).
 *
 * The guiding rule: a missing mailbox (`rejected`) only when the server said so about the
 * recipient, and permanently. A refusal about the prober (its IP, name, sender address,
 * reputation) or one we cannot attribute is `blocked`, a transient one `greylisted`: both end as
 * status unknown, because "could not find out" must never be reported as undeliverable.
 *
 * At RCPT the text is read before the codes, through the reply-pattern table (reply-patterns.ts):
 * text about the prober outranks every code, a vendor's documented wording outranks the code it
 * comes with (qmail's validrcptto list refuses unknown recipients with #5.7.1, Yahoo reports a
 * missing mailbox with 552), and a text the table does not know leaves the decision to the
 * enhanced code, then to the bare reply code. docs/verdicts.md ("How SMTP replies are classified"
 * and "How replies are read") carries the same precedence for users.
 */
import type { SmtpOutcomeKind } from '../outcome.js';
import type { SmtpReply } from './reply.js';
import { enhancedCodeOf } from './reply.js';
import type { ReplyMeaning, ReplyPattern } from './reply-patterns.js';
import { findReplyPattern, patternText } from './reply-patterns.js';

/** Where in the dialogue a reply was received. */
export type SmtpStage = 'banner' | 'helo' | 'mail' | 'rcpt';

/**
 * What to do with a reply: `continue` the dialogue, try the `next_host` (this one is going
 * away or does not speak SMTP properly), or stop with a decided outcome.
 */
export type ReplyVerdict =
  Exclude<SmtpOutcomeKind, 'unavailable' | 'timeout' | 'unicode_unsupported'> | 'continue' | 'next_host';

/** What the rules read from a reply besides its code; each part is worked out once, when asked. */
export interface ReplyReading {
  /** The enhanced code at the head of the reply, or else one written in its text. */
  readonly code: string | null;
  /** The first row of the reply-pattern table that the text matches; null when none does. */
  readonly pattern: Readonly<ReplyPattern> | null;
}

export interface Rule {
  /** Why the row exists; the test of each row quotes it. */
  why: string;
  when: (reply: SmtpReply, read: ReplyReading) => boolean;
  then: ReplyVerdict;
}

class Reading implements ReplyReading {
  readonly #reply: SmtpReply;
  #code: string | null | undefined;
  #pattern: Readonly<ReplyPattern> | null | undefined;

  constructor(reply: SmtpReply) {
    this.#reply = reply;
  }

  get code(): string | null {
    if (this.#code === undefined) this.#code = enhancedCodeOf(this.#reply);
    return this.#code;
  }

  get pattern(): Readonly<ReplyPattern> | null {
    if (this.#pattern === undefined) {
      this.#pattern = findReplyPattern(patternText(this.#reply.message), this.code);
    }
    return this.#pattern;
  }
}

const isClass = (reply: SmtpReply, digit: 2 | 4 | 5): boolean => Math.floor(reply.code / 100) === digit;
const enhanced =
  (prefix: string) =>
  (_reply: SmtpReply, read: ReplyReading): boolean =>
    read.code !== null && (read.code === prefix || read.code.startsWith(`${prefix}.`));
const codeIn =
  (...codes: number[]) =>
  (reply: SmtpReply): boolean =>
    codes.includes(reply.code);
const says = (read: ReplyReading, ...meanings: ReplyMeaning[]): boolean =>
  read.pattern !== null && meanings.includes(read.pattern.means);

/** The banner (RFC 5321 §4.3.1: 220, 421 or 554). */
const BANNER: Rule[] = [
  { why: '220 greeting: the server is ready', when: (r) => isClass(r, 2), then: 'continue' },
  {
    why: '421 at the banner: busy or going away, another MX may answer',
    when: codeIn(421),
    then: 'next_host',
  },
  {
    why: 'other 4xx at the banner: temporarily not ready, try another MX',
    when: (r) => isClass(r, 4),
    then: 'next_host',
  },
  {
    why: '554/5xx at the banner: the server refuses to talk to the prober',
    when: (r) => isClass(r, 5),
    then: 'blocked',
  },
];

/** The reply to EHLO, or to HELO after EHLO was refused. */
const HELO: Rule[] = [
  { why: '250: greeted', when: (r) => isClass(r, 2), then: 'continue' },
  { why: '421: going away, another MX may answer', when: codeIn(421), then: 'next_host' },
  {
    why: "HELO refused: about the prober's name, not the recipient",
    when: (r) => isClass(r, 4) || isClass(r, 5),
    then: 'blocked',
  },
];

/** MAIL FROM:<probe sender>: a refusal here is always about the prober. */
const MAIL: Rule[] = [
  { why: '250: sender accepted', when: (r) => isClass(r, 2), then: 'continue' },
  { why: '421: going away, another MX may answer', when: codeIn(421), then: 'next_host' },
  {
    why: '4xx whose text is about the prober or a policy (reverse DNS, blocklist...): blocked for now',
    when: (r, x) => isClass(r, 4) && says(x, 'policy', 'unclear'),
    then: 'blocked',
  },
  {
    why: 'other 4xx at MAIL FROM (greylisting, a busy server): temporary, try later',
    when: (r) => isClass(r, 4),
    then: 'greylisted',
  },
  {
    why: "5xx at MAIL FROM: the prober's sender or IP is refused",
    when: (r) => isClass(r, 5),
    then: 'blocked',
  },
];

/** RCPT TO:<address>: the reply that decides most verdicts. Order matters: first match wins. */
const RCPT: Rule[] = [
  { why: '250/251: the recipient is accepted', when: (r) => isClass(r, 2), then: 'accepted' },
  { why: '421: going away, another MX may answer', when: codeIn(421), then: 'next_host' },

  // 1. The text, through the reply-pattern table (and a sender code, which is about the prober).
  {
    why: 'text about the prober, its sender or a policy, or that says it cannot tell: whatever the code',
    when: (_r, x) => says(x, 'policy', 'unclear'),
    then: 'blocked',
  },
  {
    why: '5.1.7/5.1.8: the sender address is bad, not the recipient, whatever the text says of a mailbox',
    when: (r, x) => enhanced('5.1.7')(r, x) || enhanced('5.1.8')(r, x),
    then: 'blocked',
  },
  {
    why: 'text says the mailbox does not exist, refused permanently (5xx)',
    when: (r, x) => isClass(r, 5) && says(x, 'no_mailbox'),
    then: 'rejected',
  },
  {
    why: 'text says the mailbox does not exist, but only for now (4xx): find out later',
    when: (r, x) => isClass(r, 4) && says(x, 'no_mailbox'),
    then: 'greylisted',
  },
  { why: 'text says the mailbox is full', when: (_r, x) => says(x, 'mailbox_full'), then: 'mailbox_full' },
  {
    why: 'text says greylisting, a rate or a busy server, for now (4xx)',
    when: (r, x) => isClass(r, 4) && says(x, 'try_later'),
    then: 'greylisted',
  },
  {
    why: 'text says a rate or a busy server, refused permanently (5xx): could not find out',
    when: (r, x) => isClass(r, 5) && says(x, 'try_later'),
    then: 'blocked',
  },

  // 2. The enhanced code, at the head of the reply or written in its text ("(#5.1.1)").
  { why: '4.2.2: mailbox full (temporary)', when: enhanced('4.2.2'), then: 'mailbox_full' },
  {
    why: 'any other 4xx (450/451/452, 4.7.x policy deferrals...): temporary, find out later',
    when: (r) => isClass(r, 4),
    then: 'greylisted',
  },
  {
    why: '5.7.x: security or policy refusal (relay denied, blocklisted prober)',
    when: enhanced('5.7'),
    then: 'blocked',
  },
  {
    why: '5.1.x: bad destination mailbox or address (user unknown)',
    when: enhanced('5.1'),
    then: 'rejected',
  },
  { why: '5.2.1: mailbox disabled', when: enhanced('5.2.1'), then: 'rejected' },
  { why: '5.2.2: mailbox full', when: enhanced('5.2.2'), then: 'mailbox_full' },

  // 3. The bare reply code.
  {
    why: '551 user not local (RFC 5321): the mailbox is not at this server',
    when: codeIn(551),
    then: 'rejected',
  },
  {
    why: '552 without an enhanced code: exceeded storage allocation (RFC 5321)',
    when: (r, x) => r.code === 552 && x.code === null,
    then: 'mailbox_full',
  },
  {
    why: '500-504/555: the server did not understand the dialogue; another MX may',
    when: codeIn(500, 501, 502, 503, 504, 555),
    then: 'next_host',
  },
  {
    why: 'any other 5xx, a bare 550/553/554 among them, whose text says nothing known: could not find out',
    when: (r) => isClass(r, 5),
    then: 'blocked',
  },
];

const TABLES: Record<SmtpStage, Rule[]> = { banner: BANNER, helo: HELO, mail: MAIL, rcpt: RCPT };

/** Exposed for the row-by-row test and docs: every row of every stage. */
export const CLASSIFICATION_TABLE: Readonly<Record<SmtpStage, readonly Readonly<Rule>[]>> = TABLES;

/**
 * Classifies one reply received at `stage`. A reply no row matches (1xx/3xx, which SMTP does
 * not use at these steps) means the peer does not speak SMTP properly: `next_host`.
 */
export function classifyReply(stage: SmtpStage, reply: SmtpReply): ReplyVerdict {
  // Fast path for the common case; the table is only walked for refusals.
  if (reply.code >= 200 && reply.code < 300) return stage === 'rcpt' ? 'accepted' : 'continue';
  return matchRule(stage, reply)?.then ?? 'next_host';
}

/** The table row that decides `reply` at `stage` (null: none), for tests and diagnostics. */
export function matchRule(stage: SmtpStage, reply: SmtpReply): Readonly<Rule> | null {
  const read = new Reading(reply);
  for (const rule of TABLES[stage]) {
    if (rule.when(reply, read)) return rule;
  }
  return null;
}

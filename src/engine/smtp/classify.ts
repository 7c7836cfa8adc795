/**
 * Reply → outcome: the table that turns what an MTA said into what the probe concludes, in the
 * spirit of graphile-worker's SQLSTATE table (transient vs permanent, decided in one place).
 *
 * The guiding rule: a missing mailbox (`rejected`) only when the server said so about the
 * recipient. A refusal about the prober (its IP, name, sender address, reputation) or one we
 * cannot attribute is `blocked`, a transient one `greylisted`: both end as status unknown,
 * because "could not find out" must never be reported as undeliverable.
 * docs/verdicts.md carries the same table for users.
 */
import type { SmtpOutcomeKind } from '../outcome.js';
import type { SmtpReply } from './reply.js';

/** Where in the dialogue a reply was received. */
export type SmtpStage = 'banner' | 'helo' | 'mail' | 'rcpt';

/**
 * What to do with a reply: `continue` the dialogue, try the `next_host` (this one is going
 * away or does not speak SMTP properly), or stop with a decided outcome.
 */
export type ReplyVerdict =
  Exclude<SmtpOutcomeKind, 'unavailable' | 'timeout' | 'unicode_unsupported'> | 'continue' | 'next_host';

export interface Rule {
  /** Why the row exists; the test of each row quotes it. */
  why: string;
  when: (reply: SmtpReply, text: string) => boolean;
  then: ReplyVerdict;
}

// Words that make a refusal about the prober (its IP, HELO name, sender, reputation), not
// about the recipient. Matched on the reply text with <addresses> removed, so a recipient
// such as <policy@example.com> cannot trigger it.
const ABOUT_PROBER =
  /spamhaus|spamcop|barracuda|sorbs|\brbl\b|dnsbl|block ?list|black ?list|blocked using|listed (?:at|in|on|by)\b|reputation|client host|client ip|your ip|sender ip|ip address|\bptr\b|reverse (?:dns|hostname|lookup)|\brdns\b|\bhelo\b|\behlo\b|not permitted to relay|relay(?:ing)? (?:access )?(?:denied|not permitted|prohibited)|sender address|sender (?:domain|rejected|verify|denied|blocked)|\bspf\b|\bdmarc\b|too many connections|rate limit|policy|abuse|authenticat|starttls|must issue|encryption required/i;

// A temporary refusal that says it is greylisting.
const GREYLIST = /gr[ae]y ?list/i;

// Words of a recipient that does not exist or cannot receive (for codes that do not say).
const RECIPIENT_UNKNOWN =
  /user unknown|unknown user|unknown recipient|recipient unknown|no such (?:user|mailbox|recipient|account|address)|(?:does not|doesn'?t|not) exist|(?:user|mailbox|recipient|account)[^.]{0,40}(?:not found|unavailable|disabled|invalid|inactive|not valid)|invalid (?:recipient|mailbox|user|address)|recipient address rejected|(?:doesn'?t|does not) have an? [^ ]+ account/i;

const BRACKETED = /<[^>]*>/g;

const isClass = (reply: SmtpReply, digit: 2 | 3 | 4 | 5): boolean => Math.floor(reply.code / 100) === digit;
const enhanced =
  (prefix: string) =>
  (reply: SmtpReply): boolean =>
    reply.enhancedCode !== null &&
    (reply.enhancedCode === prefix || reply.enhancedCode.startsWith(`${prefix}.`));
const codeIn =
  (...codes: number[]) =>
  (reply: SmtpReply): boolean =>
    codes.includes(reply.code);

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
    why: '4xx that says greylisting: try later',
    when: (r, t) => isClass(r, 4) && GREYLIST.test(t),
    then: 'greylisted',
  },
  {
    why: '4xx about the prober (reverse DNS, blocklist...): blocked for now',
    when: (r, t) => isClass(r, 4) && ABOUT_PROBER.test(t),
    then: 'blocked',
  },
  { why: 'other 4xx at MAIL FROM: temporary, try later', when: (r) => isClass(r, 4), then: 'greylisted' },
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

  // Transient (4xx): never a verdict about the mailbox, except a full one.
  { why: '4xx that says greylisting', when: (r, t) => isClass(r, 4) && GREYLIST.test(t), then: 'greylisted' },
  { why: '4.2.2: mailbox full (temporary)', when: enhanced('4.2.2'), then: 'mailbox_full' },
  {
    why: '4.5.3: too many recipients, which is not a full mailbox',
    when: enhanced('4.5.3'),
    then: 'greylisted',
  },
  {
    why: '4xx about the prober (client host, reverse DNS, blocklist)',
    when: (r, t) => isClass(r, 4) && ABOUT_PROBER.test(t),
    then: 'blocked',
  },
  {
    why: '4.7.x: temporary policy refusal, typically greylisting',
    when: enhanced('4.7'),
    then: 'greylisted',
  },
  {
    why: '452 without an enhanced code: mailbox full, unless it says too many recipients or system storage',
    when: (r, t) => r.code === 452 && r.enhancedCode === null && !/too many|system storage/i.test(t),
    then: 'mailbox_full',
  },
  {
    why: '450/451 and any other 4xx: temporary, find out later',
    when: (r) => isClass(r, 4),
    then: 'greylisted',
  },

  // Permanent (5xx): about the prober first, then about the mailbox.
  {
    why: '5.7.x: security or policy refusal (relay denied, blocklisted prober)',
    when: enhanced('5.7'),
    then: 'blocked',
  },
  {
    why: '5xx whose text is about the prober, whatever its code',
    when: (r, t) => isClass(r, 5) && ABOUT_PROBER.test(t),
    then: 'blocked',
  },
  {
    why: '5.1.7/5.1.8: the sender address is bad, not the recipient',
    when: (r) => enhanced('5.1.7')(r) || enhanced('5.1.8')(r),
    then: 'blocked',
  },
  {
    why: '5.1.x: bad destination mailbox or address (user unknown)',
    when: enhanced('5.1'),
    then: 'rejected',
  },
  { why: '5.2.1: mailbox disabled', when: enhanced('5.2.1'), then: 'rejected' },
  { why: '5.2.2: mailbox full', when: enhanced('5.2.2'), then: 'mailbox_full' },
  {
    why: '550/551/553: mailbox unavailable, not local, name not allowed',
    when: codeIn(550, 551, 553),
    then: 'rejected',
  },
  { why: '552: exceeded storage allocation', when: codeIn(552), then: 'mailbox_full' },
  {
    why: '5xx whose text says the recipient does not exist (554 "no such user")',
    when: (r, t) => isClass(r, 5) && RECIPIENT_UNKNOWN.test(t),
    then: 'rejected',
  },
  {
    why: '500-504/555: the server did not understand the dialogue; another MX may',
    when: codeIn(500, 501, 502, 503, 504, 555),
    then: 'next_host',
  },
  {
    why: 'any other 5xx: refused for a reason not about the mailbox; could not find out',
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
  const text = reply.message.includes('<') ? reply.message.replace(BRACKETED, ' ') : reply.message;
  for (const rule of TABLES[stage]) {
    if (rule.when(reply, text)) return rule;
  }
  return null;
}

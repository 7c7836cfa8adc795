/** The delivery outcomes an account reports (docs/outcomes.md, "Event types"). */
export const OUTCOME_TYPES = [
  'delivered',
  'hard_bounce',
  'soft_bounce',
  'complaint',
  'unsubscribed',
  'opened',
  'clicked',
] as const;
export type OutcomeType = (typeof OUTCOME_TYPES)[number];

export function isOutcomeType(value: string): value is OutcomeType {
  return (OUTCOME_TYPES as readonly string[]).includes(value);
}

/** Events that prove mail reached the mailbox: each lifts an earlier hard bounce. */
export const PROOF_OF_DELIVERY: ReadonlySet<string> = new Set<OutcomeType>([
  'delivered',
  'opened',
  'clicked',
]);

/** Where events come in (the `source` of an event). */
export const OUTCOME_SOURCES = [
  'api',
  'message',
  'upload',
  'ses',
  'sendgrid',
  'mailgun',
  'postmark',
] as const;
export type OutcomeSource = (typeof OUTCOME_SOURCES)[number];

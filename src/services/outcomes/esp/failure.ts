/**
 * Whether a provider's failure report is a fact about the mailbox (docs/outcomes.md, "What a
 * bounce means"). Only a mailbox fact becomes a `hard_bounce`; a refusal about the sender (its
 * reputation, a policy, spam filtering, the message's content) says nothing about the address and
 * becomes nothing. The enhanced status code (RFC 3463) decides when there is one; the provider's
 * own classification is asked only when there is none.
 */
import type { OutcomeType } from '../outcome-types.js';

const ENHANCED = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;

/** The first enhanced status code in `texts` (`5.1.1`), or null. */
export function enhancedCode(...texts: unknown[]): string | null {
  for (const text of texts) {
    if (typeof text !== 'string') continue;
    const m = ENHANCED.exec(text);
    if (m) return `${m[1]}.${m[2]}.${m[3]}`;
  }
  return null;
}

/**
 * What an enhanced status code says about the mailbox: `hard_bounce` for a bad or disabled
 * mailbox or domain (5.1.x, 5.2.1), `soft_bounce` for a temporary failure or a full mailbox (4.x.x,
 * 5.2.2), `null` for a refusal about the sender, the message or the network (x.7.x policy and
 * security, x.6.x content, x.3.x and x.4.x systems and routing), `undefined` when the code does
 * not tell (5.0.0, 5.5.x protocol).
 */
export function typeOfCode(code: string | null): OutcomeType | null | undefined {
  if (code === null) return undefined;
  const [klass, subject, detail] = code.split('.').map(Number) as [number, number, number];
  if (subject === 7 || subject === 6 || subject === 3 || subject === 4) return null;
  if (klass === 4) return 'soft_bounce';
  if (klass !== 5) return undefined;
  if (subject === 1) return 'hard_bounce';
  if (subject === 2) return detail === 2 ? 'soft_bounce' : detail === 1 ? 'hard_bounce' : undefined;
  return undefined;
}

/**
 * A permanent failure: the code decides; without a decisive code, `fallback` (the provider's own
 * classification, already checked to be about the mailbox) or nothing.
 */
export function permanentFailure(code: string | null, fallback: OutcomeType | null): OutcomeType | null {
  const byCode = typeOfCode(code);
  return byCode === undefined ? fallback : byCode;
}

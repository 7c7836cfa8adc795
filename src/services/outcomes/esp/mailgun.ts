/**
 * Mailgun's webhooks (docs/outcomes.md, "Mailgun"): one event per POST, `{signature: {timestamp,
 * token, signature}, "event-data": {...}}`, the signature an HMAC-SHA256 with the account's
 * webhook signing key over the timestamp and the token. The signature does not cover the event,
 * so a token may serve once: the service records it with the body it came with (a retry brings
 * the same body; any other is a replay, refused).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { HOUR, MINUTE } from '../../../clock.js';
import { AppError } from '../../../errors.js';
import { enhancedCode, permanentFailure, typeOfCode } from './failure.js';
import { fromEpochSeconds, MappedEvents, objectOf, parseJson, unreadable, type Mapped } from './mapped.js';

/**
 * How old a signature's timestamp may be: Mailgun retries a failed POST for 8 hours, and the
 * tokens seen are kept this long, so a replay is refused for as long as the timestamp is taken.
 */
export const MAX_SIGNATURE_AGE_MS = 8 * HOUR + 15 * MINUTE;
const MAX_FUTURE_MS = 5 * MINUTE;

export interface MailgunDelivery {
  /** The signature's token: one use per body. */
  token: string;
  /** When the token stops being accepted (and its record can go). */
  expiresAt: Date;
  event: Record<string, unknown>;
}

/** Reads the body and checks its signature; throws invalid_signature or invalid_hook_payload. */
export function verifyMailgun(signingKey: string, body: Buffer, now: Date): MailgunDelivery {
  const root = objectOf(parseJson(body, 'Mailgun'));
  const signature = objectOf(root?.signature);
  const event = objectOf(root?.['event-data']);
  if (root === null || signature === null)
    throw new AppError('invalid_signature', 'the request carries no Mailgun signature');
  const { timestamp, token, signature: hex } = signature;
  if (
    (typeof timestamp !== 'string' && typeof timestamp !== 'number') ||
    typeof token !== 'string' ||
    typeof hex !== 'string'
  )
    throw new AppError('invalid_signature', 'the Mailgun signature needs timestamp, token and signature');
  const expected = createHmac('sha256', signingKey).update(`${timestamp}${token}`).digest();
  const given = Buffer.from(hex, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new AppError('invalid_signature', "the Mailgun signature does not match this source's signing key");
  const at = fromEpochSeconds(timestamp);
  const age = at === null ? Infinity : now.getTime() - at.getTime();
  if (at === null || age > MAX_SIGNATURE_AGE_MS || age < -MAX_FUTURE_MS)
    throw new AppError(
      'invalid_signature',
      'the Mailgun signature is too old (or from the future); a replay is refused',
    );
  if (event === null) unreadable('a Mailgun webhook body holds "event-data"');
  return { token, expiresAt: new Date(at.getTime() + MAX_SIGNATURE_AGE_MS), event };
}

/** Mailgun refusing to send to an address it suppressed: the bounce, complaint or unsubscription behind it came before. */
const SUPPRESSION = /^suppress-/;

function failedType(event: Record<string, unknown>): 'hard_bounce' | 'soft_bounce' | null {
  const status = objectOf(event['delivery-status']) ?? {};
  const reason = typeof event.reason === 'string' ? event.reason : '';
  if (SUPPRESSION.test(reason)) return null;
  const code = enhancedCode(status['enhanced-code'], status.message, status.description);
  if (event.severity === 'temporary') {
    const type = typeOfCode(code);
    return type === undefined || type === 'soft_bounce' ? 'soft_bounce' : null;
  }
  if (event.severity !== 'permanent') return null;
  // Without a code, Mailgun's reason `bounce` (the recipient's server refused the address) with a
  // 55x reply is taken as the mailbox's; `generic`, `old`, `esp-block` and the rest are not.
  const smtp = typeof status.code === 'number' ? status.code : Number(status.code);
  const fallback = reason === 'bounce' && [550, 551, 553].includes(smtp) ? 'hard_bounce' : null;
  const type = permanentFailure(code, fallback);
  return type === 'hard_bounce' || type === 'soft_bounce' ? type : null;
}

/** Maps one Mailgun event to ours. */
export function mapMailgun(event: Record<string, unknown>): Mapped {
  const out = new MappedEvents();
  const at = fromEpochSeconds(event.timestamp);
  const add = (type: Parameters<MappedEvents['add']>[0], detail?: unknown) =>
    out.add(type, event.recipient, at, event.id, detail);
  const status = objectOf(event['delivery-status']) ?? {};
  switch (event.event) {
    case 'delivered':
      add('delivered');
      break;
    case 'failed':
      add(failedType(event), [status.code, status.message ?? status.description].filter(Boolean).join(' '));
      break;
    case 'complained':
      add('complaint');
      break;
    case 'unsubscribed':
      add('unsubscribed');
      break;
    case 'opened':
      add('opened');
      break;
    case 'clicked':
      add('clicked');
      break;
    default:
      // accepted, rejected (Mailgun's own refusal to send), stored, and anything new.
      add(null);
  }
  return out;
}

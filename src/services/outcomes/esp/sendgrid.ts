/**
 * SendGrid's signed Event Webhook (docs/outcomes.md, "SendGrid"): an ECDSA P-256 signature
 * (base64 DER, header X-Twilio-Email-Event-Webhook-Signature) over the timestamp header and the raw
 * body, checked with the public key the account pasted; a JSON array of events.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { HOUR, MINUTE } from '../../../clock.js';
import { AppError } from '../../../errors.js';
import { enhancedCode, permanentFailure, typeOfCode } from './failure.js';
import { fromEpochSeconds, MappedEvents, objectOf, parseJson, unreadable, type Mapped } from './mapped.js';

export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

/**
 * How old a signature's timestamp may be. SendGrid retries a failed POST for up to 24 hours and
 * does not say whether a retry is signed anew, so a shorter window could drop real events; a
 * signed body replayed within it stores nothing new (events are idempotent).
 */
export const MAX_SIGNATURE_AGE_MS = 24 * HOUR + 5 * MINUTE;
const MAX_FUTURE_MS = 5 * MINUTE;

/** The key object of SendGrid's "Verification Key" (base64 DER or PEM); invalid_request unless it is a P-256 public key. */
export function sendgridPublicKey(text: string): KeyObject {
  const trimmed = text.trim();
  let key: KeyObject;
  try {
    key = trimmed.startsWith('-----BEGIN')
      ? createPublicKey(trimmed)
      : createPublicKey({ key: Buffer.from(trimmed, 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw new AppError(
      'invalid_request',
      "verification_key: not a public key; paste SendGrid's Verification Key (Mail Settings, Signed Event Webhook)",
    );
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new AppError(
      'invalid_request',
      'verification_key: SendGrid signs with an ECDSA P-256 key; this is another kind',
    );
  return key;
}

/** Throws invalid_signature unless the request carries SendGrid's valid, recent signature. */
export function verifySendgrid(
  keyText: string,
  headers: Readonly<Record<string, string | undefined>>,
  body: Buffer,
  now: Date,
): void {
  const signature = headers[SIGNATURE_HEADER];
  const timestamp = headers[TIMESTAMP_HEADER];
  if (signature === undefined || timestamp === undefined)
    throw new AppError(
      'invalid_signature',
      'the request carries no SendGrid signature; turn on the Signed Event Webhook',
    );
  const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), body]);
  let valid = false;
  try {
    valid = verify(
      'sha256',
      signed,
      { key: sendgridPublicKey(keyText), dsaEncoding: 'der' },
      Buffer.from(signature, 'base64'),
    );
  } catch {
    valid = false;
  }
  if (!valid)
    throw new AppError(
      'invalid_signature',
      "the SendGrid signature does not match this source's verification key",
    );
  const at = fromEpochSeconds(timestamp);
  if (at === null || !/^\d+$/.test(timestamp))
    throw new AppError('invalid_signature', 'the SendGrid timestamp is not a number of seconds');
  const age = now.getTime() - at.getTime();
  if (age > MAX_SIGNATURE_AGE_MS || age < -MAX_FUTURE_MS)
    throw new AppError(
      'invalid_signature',
      'the SendGrid signature is too old (or from the future); a replay is refused',
    );
}

/** bounce_classification values that are about the mailbox (SendGrid's bounce classifications). */
const CLASSIFICATION: Readonly<Record<string, 'hard_bounce' | 'soft_bounce'>> = {
  'invalid address': 'hard_bounce',
  'mailbox unavailable': 'soft_bounce',
};

function bounceType(event: Record<string, unknown>): 'hard_bounce' | 'soft_bounce' | null {
  // `blocked` (and `type: "blocked"` on a bounce) is a refusal of the sender, never a mailbox fact.
  if (event.type === 'blocked') return null;
  const code = enhancedCode(event.status, event.reason);
  const classification =
    typeof event.bounce_classification === 'string' ? event.bounce_classification.toLowerCase() : '';
  const fallback = CLASSIFICATION[classification] ?? null;
  const type = permanentFailure(code, fallback);
  return type === 'hard_bounce' || type === 'soft_bounce' ? type : null;
}

/** Maps the events of one POST (a JSON array) to ours. */
export function mapSendgrid(body: Buffer): Mapped {
  const events = parseJson(body, 'SendGrid');
  if (!Array.isArray(events)) unreadable('a SendGrid Event Webhook body is a JSON array of events');
  const out = new MappedEvents();
  events.forEach((raw: unknown, i) => {
    const event = objectOf(raw);
    if (event === null || typeof event.event !== 'string')
      unreadable(`event ${i} is not a SendGrid event (an object with "event")`);
    const at = fromEpochSeconds(event.timestamp);
    const add = (type: Parameters<MappedEvents['add']>[0], detail?: unknown) =>
      out.add(type, event.email, at, event.sg_event_id, detail);
    switch (event.event) {
      case 'delivered':
        return add('delivered');
      case 'bounce':
        return add(bounceType(event), event.reason);
      case 'deferred': {
        // A deferral is a 4xx: kept as a soft bounce only when the code says mailbox (4.2.2 full).
        const type = typeOfCode(enhancedCode(event.response));
        return add(type === 'soft_bounce' ? type : null, event.response);
      }
      case 'spamreport':
        return add('complaint');
      case 'unsubscribe':
      case 'group_unsubscribe':
        return add('unsubscribed');
      case 'open':
        return add('opened');
      case 'click':
        return add('clicked');
      default:
        // processed, dropped (SendGrid's own suppression: the bounce or report behind it came
        // before), blocked, group_resubscribe, and anything new.
        return add(null);
    }
  });
  return out;
}

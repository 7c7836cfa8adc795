/**
 * Postmark's webhooks (docs/outcomes.md, "Postmark"): Postmark does not sign, so the source's URL
 * token and the HTTP basic-auth credentials mailverdict generated (Postmark sends them from the
 * URL) are what say the request is Postmark's. One record per POST, `RecordType` saying which.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../../errors.js';
import type { OutcomeType } from '../outcome-types.js';
import { enhancedCode, typeOfCode } from './failure.js';
import { fromIso, MappedEvents, objectOf, parseJson, unreadable, type Mapped } from './mapped.js';

/** The basic-auth user name of every Postmark source (the password is the secret). */
export const POSTMARK_USER = 'mailverdict';

/** Throws invalid_hook_token unless `authorization` carries the source's basic-auth password. */
export function verifyPostmark(passwordHash: string, authorization: string | undefined): void {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(authorization ?? '');
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  const user = decoded.slice(0, colon);
  const given = createHash('sha256')
    .update(decoded.slice(colon + 1))
    .digest();
  const expected = Buffer.from(passwordHash, 'hex');
  if (
    colon < 0 ||
    user !== POSTMARK_USER ||
    given.length !== expected.length ||
    !timingSafeEqual(given, expected)
  )
    throw new AppError(
      'invalid_hook_token',
      "the request lacks this source's basic-auth credentials; put them in the webhook URL",
    );
}

/**
 * Postmark's bounce types that are about the mailbox. HardBounce and BadEmailAddress are the
 * address's; the rest (Blocked, DnsError, SpamNotification, DMARCPolicy, ManuallyDeactivated,
 * AutoResponder, …) are about the sender, the domain's DNS, or nothing.
 */
const BOUNCE_TYPES: Readonly<Record<string, OutcomeType>> = {
  HardBounce: 'hard_bounce',
  BadEmailAddress: 'hard_bounce',
  SoftBounce: 'soft_bounce',
  Transient: 'soft_bounce',
  Unsubscribe: 'unsubscribed',
};

function bounceType(record: Record<string, unknown>): OutcomeType | null {
  const type = typeof record.Type === 'string' ? (BOUNCE_TYPES[record.Type] ?? null) : null;
  if (type !== 'hard_bounce') return type;
  // Postmark calls some policy refusals hard bounces: a 5.7.x in the details is the sender's.
  return typeOfCode(enhancedCode(record.Details)) === null ? null : type;
}

/** A bounce record's own id (a number in Postmark's JSON), else the message's. */
function idOf(record: Record<string, unknown>, messageId: string): string {
  return typeof record.ID === 'number' || typeof record.ID === 'string' ? String(record.ID) : messageId;
}

/** Maps one Postmark record to ours. */
export function mapPostmark(body: Buffer): Mapped {
  const record = objectOf(parseJson(body, 'Postmark'));
  if (record === null || typeof record.RecordType !== 'string')
    unreadable('a Postmark webhook body is an object with "RecordType"');
  const out = new MappedEvents();
  const messageId = typeof record.MessageID === 'string' ? record.MessageID : '';
  switch (record.RecordType) {
    case 'Delivery':
      out.add('delivered', record.Recipient, fromIso(record.DeliveredAt), messageId, record.Details);
      break;
    case 'Bounce':
      out.add(
        bounceType(record),
        record.Email,
        fromIso(record.BouncedAt),
        `bounce-${idOf(record, messageId)}`,
        record.Details,
      );
      break;
    case 'SpamComplaint':
      out.add('complaint', record.Email, fromIso(record.BouncedAt), `complaint-${idOf(record, messageId)}`);
      break;
    case 'Open':
      out.add('opened', record.Recipient, fromIso(record.ReceivedAt), messageId);
      break;
    case 'Click':
      out.add('clicked', record.Recipient, fromIso(record.ReceivedAt), messageId);
      break;
    case 'SubscriptionChange':
      // Only the person's own unsubscription; a suppression for a bounce or a complaint comes
      // with its own record, and a reactivation says nothing.
      out.add(
        record.SuppressSending === true && record.SuppressionReason === 'ManualSuppression'
          ? 'unsubscribed'
          : null,
        record.Recipient,
        fromIso(record.ChangedAt),
        `subscription-${messageId}`,
      );
      break;
    default:
      out.add(null, undefined, null, undefined);
  }
  return out;
}

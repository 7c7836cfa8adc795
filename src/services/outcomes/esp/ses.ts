/**
 * Amazon SES notifications and event publishing, as SNS delivers them (docs/outcomes.md, "Amazon
 * SES"): the SNS message's `Message` is SES's JSON, `notificationType` (identity notifications) or
 * `eventType` (a configuration set's event destination) saying which.
 */
import type { OutcomeType } from '../outcome-types.js';
import { enhancedCode, permanentFailure, typeOfCode } from './failure.js';
import { fromIso, MappedEvents, objectOf, unreadable, type Mapped } from './mapped.js';

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value)
    ? value.map(objectOf).filter((v): v is Record<string, unknown> => v !== null)
    : [];
}

/**
 * A bounced recipient's type. The recipient's status code decides when it tells; otherwise SES's
 * sub-type: NoEmail, General and Suppressed (SES's own list of addresses that bounced as invalid)
 * are the mailbox's; OnAccountSuppressionList (the account's list, which a complaint also fills),
 * Undetermined, and the content refusals are not.
 */
function bouncedType(
  bounceType: unknown,
  subType: unknown,
  recipient: Record<string, unknown>,
): OutcomeType | null {
  const code = enhancedCode(recipient.status, recipient.diagnosticCode);
  if (bounceType === 'Permanent') {
    if (subType === 'OnAccountSuppressionList') return null;
    if (subType === 'Suppressed') return 'hard_bounce';
    const fallback = subType === 'General' || subType === 'NoEmail' ? 'hard_bounce' : null;
    return permanentFailure(code, fallback);
  }
  if (bounceType === 'Transient') {
    if (subType === 'MailboxFull') return 'soft_bounce';
    if (subType !== 'General') return null;
    const byCode = typeOfCode(code);
    return byCode === undefined || byCode === 'soft_bounce' ? 'soft_bounce' : null;
  }
  return null;
}

/** Maps the SES JSON of one SNS notification to ours. */
export function mapSes(messageText: string): Mapped {
  let parsed: unknown;
  try {
    parsed = JSON.parse(messageText);
  } catch {
    unreadable('Message: not SES JSON (is the topic an SES notification topic?)');
  }
  const root = objectOf(parsed);
  if (root === null) unreadable('Message: not an SES notification');
  const kind = root.eventType ?? root.notificationType;
  const mail = objectOf(root.mail) ?? {};
  const messageId = typeof mail.messageId === 'string' ? mail.messageId : '';
  const out = new MappedEvents();
  // Engagement names no recipient: taken only when the message had one.
  const destination: unknown =
    Array.isArray(mail.destination) && mail.destination.length === 1
      ? (mail.destination[0] as unknown)
      : undefined;
  switch (kind) {
    case 'Bounce': {
      const bounce = objectOf(root.bounce) ?? unreadable('bounce: missing from a Bounce notification');
      const recipients = list(bounce.bouncedRecipients);
      if (recipients.length === 0) unreadable('bounce.bouncedRecipients: none');
      const at = fromIso(bounce.timestamp);
      const id = typeof bounce.feedbackId === 'string' ? bounce.feedbackId : messageId;
      for (const r of recipients)
        out.add(
          bouncedType(bounce.bounceType, bounce.bounceSubType, r),
          r.emailAddress,
          at,
          id,
          [r.status, r.diagnosticCode].filter(Boolean).join(' '),
        );
      break;
    }
    case 'Complaint': {
      const complaint =
        objectOf(root.complaint) ?? unreadable('complaint: missing from a Complaint notification');
      const at = fromIso(complaint.timestamp);
      const id = typeof complaint.feedbackId === 'string' ? complaint.feedbackId : messageId;
      // `not-spam` is a report that the mail is wanted; OnAccountSuppressionList a complaint SES only presumed.
      const type =
        complaint.complaintFeedbackType === 'not-spam' ||
        complaint.complaintSubType === 'OnAccountSuppressionList'
          ? null
          : 'complaint';
      for (const r of list(complaint.complainedRecipients)) out.add(type, r.emailAddress, at, id);
      break;
    }
    case 'Delivery': {
      const delivery =
        objectOf(root.delivery) ?? unreadable('delivery: missing from a Delivery notification');
      const at = fromIso(delivery.timestamp);
      const recipients = Array.isArray(delivery.recipients) ? delivery.recipients : [];
      for (const email of recipients) out.add('delivered', email, at, messageId, delivery.smtpResponse);
      break;
    }
    case 'Open':
      out.add('opened', destination, fromIso(objectOf(root.open)?.timestamp), messageId);
      break;
    case 'Click':
      out.add('clicked', destination, fromIso(objectOf(root.click)?.timestamp), messageId);
      break;
    case 'DeliveryDelay': {
      const delay = objectOf(root.deliveryDelay) ?? {};
      const type = delay.delayType === 'MailboxFull' ? 'soft_bounce' : null;
      for (const r of list(delay.delayedRecipients))
        out.add(type, r.emailAddress, fromIso(delay.timestamp), `${messageId}-delay`, r.diagnosticCode);
      break;
    }
    default:
      // Send, Reject (SES refusing the message), Rendering Failure, Subscription,
      // AmazonSnsSubscriptionSucceeded, and anything new.
      out.add(null, undefined, null, undefined);
  }
  return out;
}

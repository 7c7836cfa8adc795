/**
 * What each provider's event becomes (docs/outcomes.md, "Mail systems"): only a fact about the
 * mailbox is a hard bounce; a refusal of the sender, the message or the network is nothing.
 * The mappings are pure functions of the payloads, checked here one rule at a time; the signed
 * deliveries through the real server are test/api/outcome-hooks.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { typeOfCode } from '../../../src/services/outcomes/esp/failure.js';
import { mapMailgun } from '../../../src/services/outcomes/esp/mailgun.js';
import { mapPostmark } from '../../../src/services/outcomes/esp/postmark.js';
import { mapSendgrid } from '../../../src/services/outcomes/esp/sendgrid.js';
import { mapSes } from '../../../src/services/outcomes/esp/ses.js';

const types = (mapped: { events: { type: string }[]; ignored: number }) => ({
  types: mapped.events.map((e) => e.type),
  ignored: mapped.ignored,
});

describe('enhanced status codes', () => {
  it.each([
    ['5.1.1', 'hard_bounce'],
    ['5.1.10', 'hard_bounce'],
    ['5.2.1', 'hard_bounce'],
    ['5.2.2', 'soft_bounce'],
    ['4.2.2', 'soft_bounce'],
    ['4.4.7', null],
    ['4.7.1', null],
    ['5.7.1', null],
    ['5.7.26', null],
    ['5.6.0', null],
    ['5.4.4', null],
    ['5.0.0', undefined],
    ['5.5.0', undefined],
  ])('%s is %s', (code, type) => {
    expect(typeOfCode(code)).toBe(type);
  });
});

describe('Amazon SES', () => {
  const bounce = (bounceType: string, bounceSubType: string, recipient: Record<string, unknown>) =>
    JSON.stringify({
      notificationType: 'Bounce',
      bounce: {
        bounceType,
        bounceSubType,
        bouncedRecipients: [{ emailAddress: 'a@x.test', ...recipient }],
        timestamp: '2026-03-10T11:00:00Z',
        feedbackId: 'fb-1',
      },
      mail: { messageId: 'm-1', destination: ['a@x.test'] },
    });

  it("takes a permanent General bounce without a code as the mailbox's, and its code when it has one", () => {
    expect(types(mapSes(bounce('Permanent', 'General', {})))).toEqual({ types: ['hard_bounce'], ignored: 0 });
    expect(
      types(
        mapSes(bounce('Permanent', 'General', { status: '5.7.1', diagnosticCode: 'smtp; 550 5.7.1 spam' })),
      ),
    ).toEqual({ types: [], ignored: 1 });
    expect(types(mapSes(bounce('Permanent', 'NoEmail', { status: '5.0.0' })))).toEqual({
      types: ['hard_bounce'],
      ignored: 0,
    });
  });

  it("takes nothing from the account's suppression list, an undetermined bounce or a content refusal", () => {
    expect(types(mapSes(bounce('Permanent', 'OnAccountSuppressionList', {})))).toEqual({
      types: [],
      ignored: 1,
    });
    expect(types(mapSes(bounce('Permanent', 'Undetermined', {})))).toEqual({ types: [], ignored: 1 });
    expect(types(mapSes(bounce('Transient', 'ContentRejected', { status: '5.3.4' })))).toEqual({
      types: [],
      ignored: 1,
    });
    expect(types(mapSes(bounce('Undetermined', 'Undetermined', {})))).toEqual({ types: [], ignored: 1 });
  });

  it("takes a full mailbox as a soft bounce, and SES's own suppression as a hard one", () => {
    expect(types(mapSes(bounce('Transient', 'MailboxFull', { status: '5.2.2' })))).toEqual({
      types: ['soft_bounce'],
      ignored: 0,
    });
    expect(types(mapSes(bounce('Permanent', 'Suppressed', {})))).toEqual({
      types: ['hard_bounce'],
      ignored: 0,
    });
  });

  it('takes no open from a message sent to several recipients (SES does not say who opened)', () => {
    const open = (destination: string[]) =>
      JSON.stringify({
        eventType: 'Open',
        mail: { messageId: 'm-2', destination },
        open: { timestamp: '2026-03-10T11:00:00Z' },
      });
    expect(types(mapSes(open(['a@x.test'])))).toEqual({ types: ['opened'], ignored: 0 });
    expect(types(mapSes(open(['a@x.test', 'b@x.test'])))).toEqual({ types: [], ignored: 1 });
  });

  it('takes nothing from a not-spam report, a send or a rejection by SES', () => {
    const complaint = JSON.stringify({
      notificationType: 'Complaint',
      complaint: {
        complainedRecipients: [{ emailAddress: 'a@x.test' }],
        complaintFeedbackType: 'not-spam',
        timestamp: '2026-03-10T11:00:00Z',
      },
      mail: { messageId: 'm-3' },
    });
    expect(types(mapSes(complaint))).toEqual({ types: [], ignored: 1 });
    expect(
      types(mapSes(JSON.stringify({ eventType: 'Send', mail: { messageId: 'm-4' }, send: {} }))),
    ).toEqual({ types: [], ignored: 1 });
    expect(
      types(
        mapSes(
          JSON.stringify({
            eventType: 'Reject',
            mail: { messageId: 'm-5' },
            reject: { reason: 'Bad content' },
          }),
        ),
      ),
    ).toEqual({ types: [], ignored: 1 });
  });
});

describe('SendGrid', () => {
  const one = (event: Record<string, unknown>) =>
    types(
      mapSendgrid(
        Buffer.from(
          JSON.stringify([{ email: 'a@x.test', timestamp: 1773140400, sg_event_id: 'e', ...event }]),
        ),
      ),
    );

  it('reads a bounce by its code, then by its classification', () => {
    expect(
      one({ event: 'bounce', type: 'bounce', status: '5.0.0', bounce_classification: 'Invalid Address' }),
    ).toEqual({ types: ['hard_bounce'], ignored: 0 });
    expect(
      one({ event: 'bounce', type: 'bounce', status: '5.0.0', bounce_classification: 'Reputation' }),
    ).toEqual({ types: [], ignored: 1 });
    expect(one({ event: 'bounce', type: 'bounce', status: '5.0.0' })).toEqual({ types: [], ignored: 1 });
    expect(
      one({ event: 'bounce', type: 'bounce', status: '5.7.1', bounce_classification: 'Invalid Address' }),
    ).toEqual({ types: [], ignored: 1 });
  });

  it('takes a deferral as a soft bounce only when the mailbox is full, and a drop as nothing', () => {
    expect(
      one({
        event: 'deferred',
        response: '452 4.2.2 The email account that you tried to reach is over quota',
      }),
    ).toEqual({ types: ['soft_bounce'], ignored: 0 });
    expect(one({ event: 'deferred', response: '421 4.7.0 Try again later, closing connection' })).toEqual({
      types: [],
      ignored: 1,
    });
    expect(one({ event: 'dropped', reason: 'Bounced Address' })).toEqual({ types: [], ignored: 1 });
  });
});

describe('Mailgun', () => {
  const failed = (severity: string, reason: string, status: Record<string, unknown>) =>
    types(
      mapMailgun({
        id: 'e',
        event: 'failed',
        severity,
        reason,
        recipient: 'a@x.test',
        timestamp: 1773140400,
        'delivery-status': status,
      }),
    );

  it("takes a 550 bounce without a code as the mailbox's, a generic failure or an ESP block as nothing", () => {
    expect(failed('permanent', 'bounce', { code: 550, message: 'No Such User Here' })).toEqual({
      types: ['hard_bounce'],
      ignored: 0,
    });
    expect(failed('permanent', 'generic', { code: 550, message: 'Rejected' })).toEqual({
      types: [],
      ignored: 1,
    });
    expect(failed('permanent', 'esp-block', { code: 605, message: 'Blocked' })).toEqual({
      types: [],
      ignored: 1,
    });
    expect(
      failed('permanent', 'bounce', { code: 554, message: '5.7.1 Service unavailable; client host blocked' }),
    ).toEqual({ types: [], ignored: 1 });
  });

  it('takes a temporary failure as a soft bounce unless it is a policy one', () => {
    expect(failed('temporary', 'generic', { code: 452, message: '4.2.2 mailbox full' })).toEqual({
      types: ['soft_bounce'],
      ignored: 0,
    });
    expect(failed('temporary', 'generic', { code: 421, message: '4.7.0 greylisted' })).toEqual({
      types: [],
      ignored: 1,
    });
  });
});

describe('Postmark', () => {
  const record = (r: Record<string, unknown>) => types(mapPostmark(Buffer.from(JSON.stringify(r))));
  const bounce = (Type: string, Details = '') =>
    record({
      RecordType: 'Bounce',
      ID: 1,
      Type,
      Email: 'a@x.test',
      BouncedAt: '2026-03-10T11:00:00Z',
      Details,
    });

  it("takes hard bounces and bad addresses as the mailbox's, and nothing about the sender or DNS", () => {
    expect(bounce('HardBounce', 'smtp;550 5.1.1 unknown')).toEqual({ types: ['hard_bounce'], ignored: 0 });
    expect(bounce('BadEmailAddress')).toEqual({ types: ['hard_bounce'], ignored: 0 });
    expect(bounce('SoftBounce')).toEqual({ types: ['soft_bounce'], ignored: 0 });
    for (const type of [
      'Blocked',
      'DnsError',
      'SpamNotification',
      'DMARCPolicy',
      'ManuallyDeactivated',
      'AutoResponder',
    ])
      expect(bounce(type), type).toEqual({ types: [], ignored: 1 });
  });

  it('takes an unsubscription by the person, and nothing from a suppression for a bounce or a reactivation', () => {
    const change = (SuppressSending: boolean, SuppressionReason: string | null) =>
      record({
        RecordType: 'SubscriptionChange',
        MessageID: 'm',
        Recipient: 'a@x.test',
        ChangedAt: '2026-03-10T11:00:00Z',
        SuppressSending,
        SuppressionReason,
      });
    expect(change(true, 'ManualSuppression')).toEqual({ types: ['unsubscribed'], ignored: 0 });
    expect(change(true, 'HardBounce')).toEqual({ types: [], ignored: 1 });
    expect(change(false, null)).toEqual({ types: [], ignored: 1 });
  });
});

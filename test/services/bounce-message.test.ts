/**
 * services/outcomes/bounce-message.ts on the corpus of real-world formats (test/kit/bounce-corpus.ts):
 * what each sender kind's bounce or report becomes, what is ignored and why, what is refused, and
 * the mbox splitter with its bounds. The route's tests (test/api/outcomes-messages.test.ts) take
 * the same messages through the server.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAppError } from '../../src/errors.js';
import { classifyBounce } from '../../src/services/outcomes/bounce-status.js';
import { eventsFromMessage, MAX_MESSAGE_BYTES } from '../../src/services/outcomes/bounce-message.js';
import { eventsFromMbox, splitMbox } from '../../src/services/outcomes/bounce-mbox.js';
import * as corpus from '../kit/bounce-corpus.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const rcpt = 'jane.doe@example.net';

async function refusal(raw: string | Uint8Array): Promise<string> {
  try {
    await eventsFromMessage(typeof raw === 'string' ? bytes(raw) : raw);
  } catch (err) {
    if (isAppError(err)) return err.code;
    throw err;
  }
  throw new Error('the message was taken');
}

describe('eventsFromMessage: one event per recipient, from what the message says about it', () => {
  it('reads a Postfix 5.1.1 bounce as a hard bounce at the Arrival-Date, keyed by the original Message-ID', async () => {
    const out = await eventsFromMessage(
      bytes(corpus.postfixHardBounce({ rcpt, messageId: 'm-1@sender.example' })),
    );
    expect(out).toEqual({
      kind: 'dsn',
      events: [
        {
          email: rcpt,
          type: 'hard_bounce',
          status: '5.1.1',
          at: '2026-03-09T07:59:58.000Z',
          detail:
            '550 5.1.1 <*@example.net>: Recipient address rejected: User unknown in virtual mailbox table',
          source_id: 'm-1@sender.example',
        },
      ],
      ignored: [],
    });
  });

  it.each([
    ['Exim (Status 5.0.0, the 5.1.1 in its diagnostic)', corpus.eximHardBounce, '5.1.1'],
    ['Microsoft 365 (5.1.10, original headers only)', corpus.microsoft365HardBounce, '5.1.10'],
    ['Gmail (Delivery Status Notification (Failure))', corpus.gmailHardBounce, '5.1.1'],
    ["an older Exchange's text-only NDR", corpus.exchangeTextBounce, '5.1.1'],
    ["Yahoo's Failure Notice (554 and its words, no enhanced code)", corpus.yahooTextBounce, '5.0.0'],
  ])('reads %s as a hard bounce of the recipient', async (_name, build, status) => {
    const out = await eventsFromMessage(bytes(build({ rcpt, messageId: 'orig-7@sender.example' })));
    expect(out.kind).toBe('dsn');
    expect(out.ignored).toEqual([]);
    expect(out.events).toHaveLength(1);
    expect(out.events[0]).toMatchObject({
      email: rcpt,
      type: 'hard_bounce',
      status,
      source_id: 'orig-7@sender.example',
    });
    expect(out.events[0]!.at).toMatch(/^2026-03-09T/);
  });

  it('reads each recipient group of a DSN on its own: one hard bounce, one refusal of the sender', async () => {
    const two = corpus
      .postfixHardBounce({ rcpt })
      .replace(
        /(Diagnostic-Code: smtp; 550 5\.1\.1[^\r\n]*\r\n)/,
        '$1\r\nFinal-Recipient: rfc822; boss@example.net\r\nAction: failed\r\nStatus: 5.7.1\r\n' +
          'Diagnostic-Code: smtp; 550 5.7.1 Message rejected as spam\r\n',
      );
    const out = await eventsFromMessage(bytes(two));
    expect(out.events).toMatchObject([{ email: rcpt, type: 'hard_bounce' }]);
    expect(out.ignored).toMatchObject([
      { email: 'boss@example.net', status: '5.7.1', reason: 'sender_policy' },
    ]);
  });

  it("reads Exim's text when its DSN part is missing (older Exim), from the SMTP answer in the text", async () => {
    const textOnly = corpus
      .eximHardBounce({ rcpt })
      .replace(
        /--1773043204-eximdsn-1804289383\r\nContent-type: message\/delivery-status[^]*?(?=--1773043204)/,
        '',
      );
    expect(textOnly).not.toContain('delivery-status\r\n');
    const out = await eventsFromMessage(bytes(textOnly));
    expect(out.events).toMatchObject([{ email: rcpt, type: 'hard_bounce', status: '5.1.1' }]);
  });

  it('reads a Postfix delay (4.4.1) as a soft bounce and a success report as a delivery', async () => {
    const delayed = await eventsFromMessage(bytes(corpus.postfixDelay({ rcpt })));
    expect(delayed.events).toMatchObject([{ email: rcpt, type: 'soft_bounce', status: '4.4.1' }]);
    const delivered = await eventsFromMessage(bytes(corpus.postfixDelivered({ rcpt })));
    expect(delivered.events).toMatchObject([{ email: rcpt, type: 'delivered', status: '2.0.0' }]);
  });

  it('takes no event from a refusal of the sender (5.7.1 block list, 5.7.26 DMARC) and says why', async () => {
    for (const status of ['5.7.1', '5.7.26']) {
      const out = await eventsFromMessage(bytes(corpus.postfixPolicyBounce({ rcpt }, status)));
      expect(out).toEqual({
        kind: 'dsn',
        events: [],
        ignored: [{ email: rcpt, status, reason: 'sender_policy', message: expect.any(String) }],
      });
    }
  });

  it('reads a 5.2.2 mailbox full as a soft bounce, in a DSN and in a text bounce', async () => {
    const dsn = await eventsFromMessage(
      bytes(corpus.postfixHardBounce({ rcpt }, '5.2.2', '552 5.2.2 <jane.doe@example.net>: Mailbox full')),
    );
    expect(dsn.events).toMatchObject([{ type: 'soft_bounce', status: '5.2.2' }]);
    const text = await eventsFromMessage(bytes(corpus.yahooTextBounce({ rcpt }, '552 5.2.2 mailbox full')));
    expect(text.events).toMatchObject([{ type: 'soft_bounce', status: '5.2.2' }]);
  });

  it('reads an ARF abuse report as a complaint of the Original-Rcpt-To', async () => {
    const out = await eventsFromMessage(
      bytes(corpus.arfComplaint({ rcpt, messageId: 'm-9@sender.example' })),
    );
    expect(out).toEqual({
      kind: 'arf',
      events: [
        {
          email: rcpt,
          type: 'complaint',
          at: '2026-03-08T18:00:00.000Z',
          detail: 'Feedback-Type: abuse; SomeGenerator/1.0',
          source_id: 'm-9@sender.example',
        },
      ],
      ignored: [],
    });
  });

  it("takes an ARF report's recipient from the original's single To when it names none", async () => {
    const out = await eventsFromMessage(bytes(corpus.arfComplaint({ rcpt, withRcptTo: false })));
    expect(out.events).toMatchObject([{ email: rcpt, type: 'complaint' }]);
  });

  it('ignores an ARF report of another feedback type', async () => {
    const out = await eventsFromMessage(bytes(corpus.arfComplaint({ rcpt, feedbackType: 'not-spam' })));
    expect(out.events).toEqual([]);
    expect(out.ignored).toMatchObject([{ email: rcpt, reason: 'feedback_type' }]);
  });

  it('refuses a message that only talks about a bounce as not_a_bounce', async () => {
    expect(await refusal(corpus.notABounce({ rcpt }))).toBe('not_a_bounce');
  });

  it('refuses what is not a message, or a DSN whose report names no recipient, as malformed_message', async () => {
    expect(await refusal('{"events": []}')).toBe('malformed_message');
    const empty = corpus
      .postfixHardBounce({ rcpt })
      .replace(/Final-Recipient[^]*?Diagnostic-Code:[^\r\n]*/, '');
    expect(await refusal(empty)).toBe('malformed_message');
  });

  it('refuses a message over the size limit as payload_too_large', async () => {
    expect(await refusal(new Uint8Array(MAX_MESSAGE_BYTES + 1).fill(65))).toBe('payload_too_large');
  });
});

describe('eventsFromMessage on damaged input', () => {
  const kinds = [
    corpus.postfixHardBounce,
    corpus.eximHardBounce,
    corpus.microsoft365HardBounce,
    corpus.exchangeTextBounce,
    corpus.gmailHardBounce,
    corpus.yahooTextBounce,
    corpus.arfComplaint,
  ];

  it('answers a real bounce with bytes changed or cut with events or a registered error, never a crash', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...kinds),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 30 }),
        fc.nat(),
        async (build, edits, cut) => {
          const raw = bytes(build({ rcpt }));
          for (const [at, byte] of edits) raw[at % raw.length] = byte;
          const damaged = raw.subarray(0, raw.length - (cut % 400));
          try {
            const out = await eventsFromMessage(damaged);
            expect(out.events.length + out.ignored.length).toBeLessThanOrEqual(100);
          } catch (err) {
            expect(isAppError(err), String(err)).toBe(true);
          }
        },
      ),
      { numRuns: 300, seed: 27 },
    );
  });
});

describe('classifyBounce: the status table', () => {
  it.each([
    [{ action: 'failed', status: '5.1.1' }, 'hard_bounce'],
    [{ action: 'failed', status: '5.1.2' }, 'hard_bounce'],
    [{ action: 'failed', status: '5.2.1' }, 'hard_bounce'],
    [{ action: 'failed', status: '5.2.2' }, 'soft_bounce'],
    [{ action: 'failed', status: '4.2.2' }, 'soft_bounce'],
    [{ action: 'delayed', status: '4.4.7' }, 'soft_bounce'],
    [{ action: 'delivered', status: '2.0.0' }, 'delivered'],
    [{ action: 'failed', status: '5.0.0', diagnostic: '550 No such user here' }, 'hard_bounce'],
    [{ action: 'failed', status: '5.0.0', diagnostic: '550 Requested action not taken' }, 'unclassified'],
    [{ action: 'failed', status: '5.0.0', diagnostic: '554 Message rejected as spam' }, 'sender_policy'],
    [{ action: 'failed', status: '5.1.0', diagnostic: '550 5.1.0 Sender address rejected' }, 'sender_policy'],
    [{ action: 'failed', status: '5.1.8' }, 'sender_policy'],
    [{ action: 'failed', status: '5.7.1', diagnostic: '550 5.7.1 user unknown' }, 'sender_policy'],
    [{ action: 'failed', status: '5.3.4' }, 'not_about_mailbox'],
    [{ action: 'failed', status: '5.6.0' }, 'not_about_mailbox'],
    [{ action: 'failed' }, 'unclassified'],
  ])('%j is %s', (input, expected) => {
    const verdict = classifyBounce(input);
    expect('type' in verdict ? verdict.type : verdict.ignored).toBe(expected);
  });
});

describe('eventsFromMbox', () => {
  const mbox = [
    `From MAILER-DAEMON Mon Mar  9 08:00:01 2026\n${corpus.postfixHardBounce({ rcpt: 'a@example.net', lf: true })}`,
    `From jane@customer.example Mon Mar  9 09:00:00 2026\n${corpus.notABounce({ rcpt: 'b@example.net', lf: true })}`,
    `From MAILER-DAEMON Mon Mar  9 08:00:08 2026\n${corpus.yahooTextBounce({ rcpt: 'c@example.net', lf: true }).replace('\n\nHello', '\n\n>From the sender: hello')}`,
    `From abusedesk@example.com Thu Mar  8 14:00:00 2026\n${corpus.arfComplaint({ rcpt: 'd@example.net', lf: true })}`,
  ].join('\n');

  it('splits on the From lines after a blank line and unquotes >From lines', () => {
    const messages = splitMbox(bytes(mbox));
    expect(messages).toHaveLength(4);
    expect(new TextDecoder().decode(messages[0]).startsWith('Return-Path: <>\n')).toBe(true);
    expect(new TextDecoder().decode(messages[2])).toContain('\n\nFrom the sender: hello');
  });

  it('turns each bounce into events and lists the messages that were not bounces', async () => {
    const out = await eventsFromMbox(bytes(mbox));
    expect(out.messages).toBe(4);
    expect(out.events.map((e) => [e.email, e.type])).toEqual([
      ['a@example.net', 'hard_bounce'],
      ['c@example.net', 'hard_bounce'],
      ['d@example.net', 'complaint'],
    ]);
    expect(out.rejected).toMatchObject([{ message_index: 1, error: 'not_a_bounce' }]);
  });

  it('reads CRLF mbox files, and a file of one message without its From line', async () => {
    const crlf = mbox.replace(/\r?\n/g, '\r\n');
    expect((await eventsFromMbox(bytes(crlf))).events).toHaveLength(3);
    const eml = await eventsFromMbox(bytes(corpus.gmailHardBounce({ rcpt })));
    expect(eml).toMatchObject({ messages: 1, events: [{ email: rcpt, type: 'hard_bounce' }] });
  });

  it('refuses an mbox that would yield more events than one intake takes', async () => {
    await expect(eventsFromMbox(bytes(mbox), 2)).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

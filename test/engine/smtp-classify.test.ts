import { describe, expect, it } from 'vitest';
import type { ReplyVerdict, SmtpStage } from '../../src/engine/smtp/classify.js';
import { CLASSIFICATION_TABLE, classifyReply, matchRule } from '../../src/engine/smtp/classify.js';
import type { SmtpReply } from '../../src/engine/smtp/reply.js';
import { ReplyParser } from '../../src/engine/smtp/reply.js';

function reply(raw: string): SmtpReply {
  const [parsed] = new ReplyParser().push(raw.endsWith('\n') ? raw : `${raw}\r\n`);
  if (!parsed) throw new Error(`incomplete reply: ${raw}`);
  return parsed;
}

/**
 * Real-world replies for every row of the table: [row, reply, expected verdict]. The expected
 * verdict is written out again so that a changed row fails here until this table is updated.
 */
const EXAMPLES: Record<SmtpStage, [string, string, ReplyVerdict][]> = {
  banner: [
    ['220 greeting: the server is ready', '220 mx.example.com ESMTP Postfix', 'continue'],
    [
      '421 at the banner: busy or going away, another MX may answer',
      '421 4.3.2 Service not available, closing channel',
      'next_host',
    ],
    [
      'other 4xx at the banner: temporarily not ready, try another MX',
      '450 too busy, try later',
      'next_host',
    ],
    [
      '554/5xx at the banner: the server refuses to talk to the prober',
      '554 5.7.1 Client host rejected: blocked using Spamhaus',
      'blocked',
    ],
    [
      '554/5xx at the banner: the server refuses to talk to the prober',
      '554 No SMTP service here',
      'blocked',
    ],
  ],
  helo: [
    ['250: greeted', '250-mx.example.com\r\n250 PIPELINING\r\n', 'continue'],
    ['421: going away, another MX may answer', '421 4.7.0 Try again later, closing connection', 'next_host'],
    [
      "HELO refused: about the prober's name, not the recipient",
      '504 5.5.2 <localhost>: Helo command rejected: need fully-qualified hostname',
      'blocked',
    ],
    ["HELO refused: about the prober's name, not the recipient", '450 4.7.1 Helo name rejected', 'blocked'],
  ],
  mail: [
    ['250: sender accepted', '250 2.1.0 Ok', 'continue'],
    ['421: going away, another MX may answer', '421 4.7.0 Too many errors', 'next_host'],
    [
      '4xx whose text is about the prober or a policy (reverse DNS, blocklist...): blocked for now',
      '450 4.7.1 Client host rejected: cannot find your reverse hostname, [192.0.2.1]',
      'blocked',
    ],
    [
      '4xx whose text is about the prober or a policy (reverse DNS, blocklist...): blocked for now',
      '451 4.7.1 Rate limit exceeded, too many connections from 192.0.2.1',
      'blocked',
    ],
    [
      'other 4xx at MAIL FROM (greylisting, a busy server): temporary, try later',
      '451 4.7.1 Greylisted, please retry in 5 minutes',
      'greylisted',
    ],
    [
      'other 4xx at MAIL FROM (greylisting, a busy server): temporary, try later',
      '451 4.3.0 Local error in processing',
      'greylisted',
    ],
    [
      "5xx at MAIL FROM: the prober's sender or IP is refused",
      '553 5.1.8 <verify@probe.example>: Sender address rejected: Domain not found',
      'blocked',
    ],
    ["5xx at MAIL FROM: the prober's sender or IP is refused", '550 Rejected', 'blocked'],
  ],
  rcpt: [
    ['250/251: the recipient is accepted', '250 2.1.5 Ok', 'accepted'],
    ['250/251: the recipient is accepted', '251 2.1.5 User not local; will forward', 'accepted'],
    [
      '421: going away, another MX may answer',
      '421 4.4.2 mx.example.com Error: timeout exceeded',
      'next_host',
    ],
    [
      'text about the prober, its sender or a policy, or that says it cannot tell: whatever the code',
      '554 5.7.1 <bob@example.com>: Relay access denied',
      'blocked',
    ],
    [
      'text about the prober, its sender or a policy, or that says it cannot tell: whatever the code',
      '550 Client host blocked using zen.spamhaus.org',
      'blocked',
    ],
    [
      'text about the prober, its sender or a policy, or that says it cannot tell: whatever the code',
      '450 4.7.1 Client host rejected: cannot find your hostname, [192.0.2.1]',
      'blocked',
    ],
    [
      'text about the prober, its sender or a policy, or that says it cannot tell: whatever the code',
      "553 5.1.1 Sorry, that domain isn't in my list of allowed rcpthosts.",
      'blocked',
    ],
    [
      'text about the prober, its sender or a policy, or that says it cannot tell: whatever the code',
      "550 OU-001 (SNT004-MC1F43) Unfortunately, messages from 192.0.2.1 weren't sent.",
      'blocked',
    ],
    [
      '5.1.7/5.1.8: the sender address is bad, not the recipient, whatever the text says of a mailbox',
      '553 5.1.8 Domain does not exist',
      'blocked',
    ],
    [
      'text says the mailbox does not exist, refused permanently (5xx)',
      '550-5.1.1 The email account that you tried to reach does not exist.\r\n550 5.1.1 https://support.google.com/mail/?p=NoSuchUser\r\n',
      'rejected',
    ],
    [
      'text says the mailbox does not exist, refused permanently (5xx)',
      '550 Requested action not taken: mailbox unavailable',
      'rejected',
    ],
    [
      'text says the mailbox does not exist, refused permanently (5xx)',
      '511 sorry, no mailbox here by that name (#5.1.1 - chkuser)',
      'rejected',
    ],
    [
      'text says the mailbox does not exist, refused permanently (5xx)',
      '553 sorry, this recipient is not in my validrcptto list (#5.7.1)',
      'rejected',
    ],
    [
      'text says the mailbox does not exist, refused permanently (5xx)',
      '552 1 Requested mail action aborted, mailbox not found',
      'rejected',
    ],
    [
      'text says the mailbox does not exist, refused permanently (5xx)',
      '550 5.4.1 Recipient address rejected: Access denied',
      'rejected',
    ],
    [
      'text says the mailbox does not exist, but only for now (4xx): find out later',
      '450 4.1.1 <bob@example.com>: Recipient address rejected: User unknown in local recipient table',
      'greylisted',
    ],
    [
      'text says the mailbox is full',
      '452 4.2.2 The email account that you tried to reach is over quota',
      'mailbox_full',
    ],
    ['text says the mailbox is full', '452 Mailbox over quota', 'mailbox_full'],
    [
      'text says the mailbox is full',
      '552 Requested mail action aborted: exceeded storage allocation',
      'mailbox_full',
    ],
    [
      'text says greylisting, a rate or a busy server, for now (4xx)',
      '450 4.2.0 <bob@example.com>: Recipient address rejected: Greylisted, see https://postgrey.schweikert.ch/',
      'greylisted',
    ],
    [
      'text says greylisting, a rate or a busy server, for now (4xx)',
      '452 4.5.3 Too many recipients',
      'greylisted',
    ],
    [
      'text says greylisting, a rate or a busy server, for now (4xx)',
      '452 Insufficient system storage',
      'greylisted',
    ],
    [
      'text says a rate or a busy server, refused permanently (5xx): could not find out',
      '550 5.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered.',
      'blocked',
    ],
    [
      '4.2.2: mailbox full (temporary)',
      '452 4.2.2 <bob@example.com>: Recipient address rejected',
      'mailbox_full',
    ],
    [
      'any other 4xx (450/451/452, 4.7.x policy deferrals...): temporary, find out later',
      '450 4.7.1 Try again later',
      'greylisted',
    ],
    [
      'any other 4xx (450/451/452, 4.7.x policy deferrals...): temporary, find out later',
      '451 Temporary failure, please try later',
      'greylisted',
    ],
    [
      'any other 4xx (450/451/452, 4.7.x policy deferrals...): temporary, find out later',
      '450 4.2.1 Mailbox busy',
      'greylisted',
    ],
    [
      'any other 4xx (450/451/452, 4.7.x policy deferrals...): temporary, find out later',
      '452 Requested action not taken',
      'greylisted',
    ],
    [
      '5.7.x: security or policy refusal (relay denied, blocklisted prober)',
      '550 5.7.1 Requested action not taken: mailbox unavailable',
      'blocked',
    ],
    [
      '5.7.x: security or policy refusal (relay denied, blocklisted prober)',
      '554 5.7.1 Transaction failed',
      'blocked',
    ],
    [
      '5.1.x: bad destination mailbox or address (user unknown)',
      '553 5.1.3 Bad recipient address syntax',
      'rejected',
    ],
    [
      '5.1.x: bad destination mailbox or address (user unknown)',
      '550 <bob@example.com>: delivery refused (#5.1.1)',
      'rejected',
    ],
    ['5.2.1: mailbox disabled', '550 5.2.1 <bob@example.com>... Mailbox not accepting messages', 'rejected'],
    ['5.2.2: mailbox full', '552 5.2.2 <bob@example.com>: Requested mail action aborted', 'mailbox_full'],
    [
      '551 user not local (RFC 5321): the mailbox is not at this server',
      '551 please try <bob@other.example>',
      'rejected',
    ],
    [
      '552 without an enhanced code: exceeded storage allocation (RFC 5321)',
      '552 Requested mail action aborted',
      'mailbox_full',
    ],
    [
      '500-504/555: the server did not understand the dialogue; another MX may',
      '502 5.5.1 Command not implemented',
      'next_host',
    ],
    [
      '500-504/555: the server did not understand the dialogue; another MX may',
      '503 Bad sequence of commands',
      'next_host',
    ],
    [
      'any other 5xx, a bare 550/553/554 among them, whose text says nothing known: could not find out',
      '554 Transaction failed',
      'blocked',
    ],
    [
      'any other 5xx, a bare 550/553/554 among them, whose text says nothing known: could not find out',
      '521 5.3.2 Machine does not accept mail',
      'blocked',
    ],
    [
      'any other 5xx, a bare 550/553/554 among them, whose text says nothing known: could not find out',
      '550 Rejected',
      'blocked',
    ],
    [
      'any other 5xx, a bare 550/553/554 among them, whose text says nothing known: could not find out',
      '553 Requested action not taken',
      'blocked',
    ],
  ],
};

describe('the reply classification table', () => {
  for (const stage of Object.keys(CLASSIFICATION_TABLE) as SmtpStage[]) {
    describe(`at ${stage}`, () => {
      for (const rule of CLASSIFICATION_TABLE[stage]) {
        it(`row "${rule.why}" → ${rule.then}`, () => {
          const examples = EXAMPLES[stage].filter(([why]) => why === rule.why);
          expect(examples.length, 'every row needs at least one real-world example').toBeGreaterThan(0);
          for (const [, raw, expected] of examples) {
            const parsed = reply(raw);
            expect(matchRule(stage, parsed)?.why, raw).toBe(rule.why);
            expect(classifyReply(stage, parsed), raw).toBe(expected);
          }
        });
      }
    });
  }

  it('has no example for a row that no longer exists', () => {
    for (const stage of Object.keys(EXAMPLES) as SmtpStage[]) {
      const rows = new Set(CLASSIFICATION_TABLE[stage].map((rule) => rule.why));
      for (const [why] of EXAMPLES[stage]) expect(rows.has(why), why).toBe(true);
    }
  });
});

describe('classifyReply, the cases that matter most', () => {
  it('calls 452 4.5.3 "too many recipients" transient, not mailbox full', () => {
    expect(classifyReply('rcpt', reply('452 4.5.3 Too many recipients'))).toBe('greylisted');
    expect(classifyReply('rcpt', reply('452 Too many recipients received this hour'))).toBe('greylisted');
  });

  it('never calls a refusal about the prober a missing mailbox', () => {
    for (const raw of [
      '550 5.7.1 Service unavailable; client [192.0.2.1] blocked using Spamhaus',
      '550 Your IP address is listed in an RBL',
      '550 5.1.1 Message rejected due to poor sender reputation',
      '553 sorry, this client is not permitted to relay',
      '550 5.1.0 Sender address rejected: Domain not found',
    ]) {
      expect(classifyReply('rcpt', reply(raw)), raw).toBe('blocked');
    }
  });

  it('does not read policy words inside the recipient address as being about the prober', () => {
    expect(
      classifyReply(
        'rcpt',
        reply('550 5.1.1 <policy@example.com>: Recipient address rejected: User unknown'),
      ),
    ).toBe('rejected');
    expect(classifyReply('rcpt', reply('550 <abuse.helo@example.com> No such user here'))).toBe('rejected');
  });

  it('treats a 5xx at MAIL FROM as blocked even with a user-unknown code', () => {
    expect(classifyReply('mail', reply('550 5.1.1 User unknown'))).toBe('blocked');
  });

  it('reads an enhanced code written in the text the way qmail writes it', () => {
    expect(classifyReply('rcpt', reply('511 sorry, no mailbox here by that name (#5.1.1 - chkuser)'))).toBe(
      'rejected',
    );
    expect(classifyReply('rcpt', reply('550 refused (#5.7.1)'))).toBe('blocked');
    expect(classifyReply('rcpt', reply('522 quota (#5.2.2 - chkuser)'))).toBe('mailbox_full');
  });

  it('lets text about the prober outrank an explicit user-unknown code, written or at the head', () => {
    expect(
      classifyReply('rcpt', reply('571 sorry, you are violating our security policies (#5.1.1 - chkuser)')),
    ).toBe('blocked');
    expect(
      classifyReply(
        'rcpt',
        reply("553 sorry, that domain isn't in my list of allowed rcpthosts (#5.5.3 - chkuser)"),
      ),
    ).toBe('blocked');
  });

  it('does not call a bare 550 or 553 whose text says nothing known a missing mailbox', () => {
    for (const raw of ['550 Rejected', '550 Administrative prohibition', '553 Requested action not taken']) {
      expect(classifyReply('rcpt', reply(raw)), raw).toBe('blocked');
    }
  });

  it("leaves RFC 5321's generic 550 wording to a specific enhanced code when there is one", () => {
    expect(classifyReply('rcpt', reply('550 Requested action not taken: mailbox unavailable'))).toBe(
      'rejected',
    );
    expect(classifyReply('rcpt', reply('550 5.7.1 Requested action not taken: mailbox unavailable'))).toBe(
      'blocked',
    );
  });

  it('moves on for a reply class SMTP does not use at RCPT', () => {
    expect(classifyReply('rcpt', reply('354 go ahead'))).toBe('next_host');
  });
});

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
    ['4xx that says greylisting: try later', '451 4.7.1 Greylisted, please retry in 5 minutes', 'greylisted'],
    [
      '4xx about the prober (reverse DNS, blocklist...): blocked for now',
      '450 4.7.1 Client host rejected: cannot find your reverse hostname, [192.0.2.1]',
      'blocked',
    ],
    ['other 4xx at MAIL FROM: temporary, try later', '451 4.3.0 Local error in processing', 'greylisted'],
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
      '4xx that says greylisting',
      '450 4.2.0 <bob@example.com>: Recipient address rejected: Greylisted, see https://postgrey.schweikert.ch/',
      'greylisted',
    ],
    [
      '4.2.2: mailbox full (temporary)',
      '452 4.2.2 The email account that you tried to reach is over quota',
      'mailbox_full',
    ],
    [
      '4.5.3: too many recipients, which is not a full mailbox',
      '452 4.5.3 Too many recipients',
      'greylisted',
    ],
    [
      '4xx about the prober (client host, reverse DNS, blocklist)',
      '450 4.7.1 Client host rejected: cannot find your hostname, [192.0.2.1]',
      'blocked',
    ],
    ['4.7.x: temporary policy refusal, typically greylisting', '450 4.7.1 Try again later', 'greylisted'],
    [
      '452 without an enhanced code: mailbox full, unless it says too many recipients or system storage',
      '452 Mailbox over quota',
      'mailbox_full',
    ],
    [
      '450/451 and any other 4xx: temporary, find out later',
      '451 Temporary local problem - please try later',
      'greylisted',
    ],
    ['450/451 and any other 4xx: temporary, find out later', '452 Insufficient system storage', 'greylisted'],
    ['450/451 and any other 4xx: temporary, find out later', '450 4.2.1 Mailbox busy', 'greylisted'],
    [
      '5.7.x: security or policy refusal (relay denied, blocklisted prober)',
      '554 5.7.1 <bob@example.com>: Relay access denied',
      'blocked',
    ],
    [
      '5.7.x: security or policy refusal (relay denied, blocklisted prober)',
      '550 5.7.606 Access denied, banned sending IP [192.0.2.1]',
      'blocked',
    ],
    [
      '5xx whose text is about the prober, whatever its code',
      '550 Client host blocked using zen.spamhaus.org',
      'blocked',
    ],
    [
      '5xx whose text is about the prober, whatever its code',
      '550 5.1.0 <verify@probe.example>: Sender address rejected: undeliverable',
      'blocked',
    ],
    [
      '5.1.7/5.1.8: the sender address is bad, not the recipient',
      '553 5.1.8 Domain of sender does not exist',
      'blocked',
    ],
    [
      '5.1.x: bad destination mailbox or address (user unknown)',
      '550-5.1.1 The email account that you tried to reach does not exist.\r\n550 5.1.1 https://support.google.com/mail/?p=NoSuchUser\r\n',
      'rejected',
    ],
    [
      '5.1.x: bad destination mailbox or address (user unknown)',
      '553 5.1.3 Bad recipient address syntax',
      'rejected',
    ],
    [
      '5.2.1: mailbox disabled',
      '550 5.2.1 The email account that you tried to reach is disabled',
      'rejected',
    ],
    ['5.2.2: mailbox full', '552 5.2.2 Mailbox full', 'mailbox_full'],
    [
      '550/551/553: mailbox unavailable, not local, name not allowed',
      '550 Requested action not taken: mailbox unavailable',
      'rejected',
    ],
    [
      '550/551/553: mailbox unavailable, not local, name not allowed',
      '551 User not local; please try <bob@other.example>',
      'rejected',
    ],
    [
      '550/551/553: mailbox unavailable, not local, name not allowed',
      '550 5.4.1 Recipient address rejected: Access denied',
      'rejected',
    ],
    [
      '552: exceeded storage allocation',
      '552 Requested mail action aborted: exceeded storage allocation',
      'mailbox_full',
    ],
    [
      '5xx whose text says the recipient does not exist (554 "no such user")',
      "554 delivery error: dd This user doesn't have a example.com account",
      'rejected',
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
      'any other 5xx: refused for a reason not about the mailbox; could not find out',
      '554 Transaction failed',
      'blocked',
    ],
    [
      'any other 5xx: refused for a reason not about the mailbox; could not find out',
      '521 5.3.2 Machine does not accept mail',
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

  it('moves on for a reply class SMTP does not use at RCPT', () => {
    expect(classifyReply('rcpt', reply('354 go ahead'))).toBe('next_host');
  });
});

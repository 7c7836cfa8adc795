import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_REPLY_LINE,
  MAX_REPLY_LINES,
  ReplyParser,
  SmtpProtocolError,
  enhancedCodeOf,
  parseEhloExtensions,
} from '../../src/engine/smtp/reply.js';

function parseAll(...chunks: string[]) {
  const parser = new ReplyParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

describe('ReplyParser', () => {
  it('parses a single-line reply', () => {
    expect(parseAll('220 mx.example.com ESMTP ready\r\n')).toEqual([
      {
        code: 220,
        enhancedCode: null,
        lines: ['mx.example.com ESMTP ready'],
        message: 'mx.example.com ESMTP ready',
      },
    ]);
  });

  it('joins a multi-line reply into one reply', () => {
    const [reply] = parseAll('250-mx.example.com\r\n250-PIPELINING\r\n250 SIZE 1000\r\n');
    expect(reply).toMatchObject({ code: 250, lines: ['mx.example.com', 'PIPELINING', 'SIZE 1000'] });
  });

  it('returns nothing until the last line of a reply has arrived', () => {
    const parser = new ReplyParser();
    expect(parser.push('250-first\r\n250-sec')).toEqual([]);
    expect(parser.push('ond\r')).toEqual([]);
    expect(parser.push('\n250 last\r\n')).toMatchObject([{ lines: ['first', 'second', 'last'] }]);
  });

  it('accepts bare LF line ends', () => {
    expect(parseAll('250-a\n250 b\n')).toMatchObject([{ code: 250, lines: ['a', 'b'] }]);
  });

  it('returns every reply completed by one chunk, in order', () => {
    const replies = parseAll('250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n550 5.1.1 <x@y.test> unknown\r\n');
    expect(replies.map((r) => r.code)).toEqual([250, 250, 550]);
  });

  it('accepts a bare code without text', () => {
    expect(parseAll('250\r\n')).toEqual([{ code: 250, enhancedCode: null, lines: [''], message: '' }]);
  });

  it('extracts the RFC 3463 enhanced code and removes it from every line', () => {
    const [reply] = parseAll(
      '550-5.1.1 The email account does not exist.\r\n550 5.1.1 Try double-checking.\r\n',
    );
    expect(reply).toMatchObject({
      code: 550,
      enhancedCode: '5.1.1',
      lines: ['The email account does not exist.', 'Try double-checking.'],
      message: 'The email account does not exist. Try double-checking.',
    });
  });

  it('reads a three-digit detail such as 5.7.606', () => {
    expect(parseAll('550 5.7.606 Access denied, banned sending IP\r\n')[0]!.enhancedCode).toBe('5.7.606');
  });

  it('ignores an enhanced code whose class differs from the reply code', () => {
    expect(parseAll('550 2.1.5 odd server\r\n')[0]!.enhancedCode).toBeNull();
  });

  it('does not take a version number in the text for an enhanced code', () => {
    expect(parseAll('220 mx ESMTP Postfix 3.7.11\r\n')[0]!.enhancedCode).toBeNull();
    expect(parseAll('550 5.1.1x\r\n')[0]!.enhancedCode).toBeNull();
  });

  it('rejects a line that does not start with a three-digit code', () => {
    expect(() => parseAll('hello there\r\n')).toThrow(SmtpProtocolError);
    expect(() => parseAll('25\r\n')).toThrow(SmtpProtocolError);
    expect(() => parseAll('150 not a reply class smtp uses here\r\n')).toThrow(SmtpProtocolError);
  });

  it('rejects a fourth character other than space or hyphen', () => {
    expect(() => parseAll('250_ok\r\n')).toThrow(SmtpProtocolError);
  });

  it('rejects a code that changes inside one multi-line reply', () => {
    expect(() => parseAll('250-a\r\n550 b\r\n')).toThrow(/changed/);
  });

  it('rejects an overlong line, complete or still arriving', () => {
    expect(() => parseAll(`250 ${'x'.repeat(MAX_REPLY_LINE)}\r\n`)).toThrow(/longer than/);
    const parser = new ReplyParser();
    expect(() => {
      for (let i = 0; i < 10; i++) parser.push(`${'x'.repeat(MAX_REPLY_LINE / 4)}`);
    }).toThrow(/longer than/);
  });

  it('rejects a reply with too many lines', () => {
    const endless = '250-keyword\r\n'.repeat(MAX_REPLY_LINES + 1);
    expect(() => parseAll(endless)).toThrow(/lines/);
  });

  it('forgets a partial reply on reset', () => {
    const parser = new ReplyParser();
    parser.push('250-partial\r\n250 half');
    parser.reset();
    expect(parser.push('220 fresh\r\n')).toMatchObject([{ code: 220, lines: ['fresh'] }]);
  });

  it('gives the same replies however the stream is split into chunks', () => {
    const stream =
      '220 mx ready\r\n250-mx\r\n250-PIPELINING\r\n250 STARTTLS\r\n250 2.1.0 ok\r\n550-5.1.1 no\r\n550 5.1.1 such user\r\n';
    const whole = parseAll(stream);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: stream.length }), { maxLength: 12 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks: string[] = [];
        let from = 0;
        for (const point of points) {
          chunks.push(stream.slice(from, point));
          from = point;
        }
        chunks.push(stream.slice(from));
        expect(parseAll(...chunks)).toEqual(whole);
      }),
    );
  });
});

describe('enhancedCodeOf', () => {
  const codeOf = (raw: string) => enhancedCodeOf(parseAll(`${raw}\r\n`)[0]!);

  it('is the code at the head of the reply when there is one', () => {
    expect(codeOf('550 5.1.1 User unknown (#5.7.1)')).toBe('5.1.1');
  });

  it("reads qmail's code written in the text, with or without a plugin's name", () => {
    expect(codeOf('550 sorry, no mailbox here by that name. (#5.1.1)')).toBe('5.1.1');
    expect(codeOf('511 sorry, no mailbox here by that name (#5.1.1 - chkuser)')).toBe('5.1.1');
    expect(codeOf("553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)")).toBe('5.7.1');
    expect(codeOf('550 Mailbox unavailable (5.2.1)')).toBe('5.2.1');
  });

  it('ignores a written code whose class differs from the reply code', () => {
    expect(codeOf('550 try later (#4.3.0)')).toBeNull();
  });

  it('does not take an IP address, a version or a Yahoo detail for a code', () => {
    expect(codeOf('550 rejected, see (#5.1.1.4)')).toBeNull();
    expect(codeOf('554 This mailbox is disabled (554.30)')).toBeNull();
    expect(codeOf('550 Client host [5.1.1.9] blocked')).toBeNull();
    expect(codeOf('550 exim 4.96.1 says no')).toBeNull();
  });

  it('is null when the reply has no code at all', () => {
    expect(codeOf('550 Unrouteable address')).toBeNull();
  });
});

describe('parseEhloExtensions', () => {
  const ehlo = (...keywords: string[]) =>
    parseAll(
      [`mx.example.com greets you`, ...keywords]
        .map((k, i, all) => `250${i === all.length - 1 ? ' ' : '-'}${k}\r\n`)
        .join(''),
    )[0]!;

  it('reads PIPELINING, STARTTLS, 8BITMIME, SMTPUTF8 and ENHANCEDSTATUSCODES', () => {
    const ext = parseEhloExtensions(
      ehlo('PIPELINING', 'STARTTLS', '8BITMIME', 'SMTPUTF8', 'ENHANCEDSTATUSCODES'),
    );
    expect(ext).toMatchObject({
      pipelining: true,
      starttls: true,
      eightBitMime: true,
      smtpUtf8: true,
      enhancedStatusCodes: true,
    });
  });

  it('reports what is not announced as absent', () => {
    expect(parseEhloExtensions(ehlo('8BITMIME'))).toMatchObject({
      pipelining: false,
      starttls: false,
      size: null,
    });
  });

  it('does not take the greeting line for a keyword', () => {
    const ext = parseEhloExtensions(parseAll('250 PIPELINING.example.com\r\n')[0]!);
    expect(ext.pipelining).toBe(false);
    expect(ext.keywords.size).toBe(0);
  });

  it('matches keywords case-insensitively and keeps their parameters', () => {
    const ext = parseEhloExtensions(ehlo('pipelining', 'auth PLAIN LOGIN'));
    expect(ext.pipelining).toBe(true);
    expect(ext.keywords.get('AUTH')).toBe('PLAIN LOGIN');
  });

  it('reads the SIZE limit, 0 when announced without one', () => {
    expect(parseEhloExtensions(ehlo('SIZE 35882577')).size).toBe(35882577);
    expect(parseEhloExtensions(ehlo('SIZE')).size).toBe(0);
  });
});

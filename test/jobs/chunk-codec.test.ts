import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ChunkDecodeError,
  decodeEmails,
  decodeRepeats,
  decodeResults,
  encodeEmails,
  addressKey,
  encodeRepeats,
  encodeResults,
} from '../../src/store/chunk-codec.js';

describe('chunk codec', () => {
  it('round-trips any strings, commas, quotes and line breaks included', () => {
    const emails = ['"a,b\\"c"@example.com', 'x\ny@z.co', '', 'ünï@çödé.de'];
    expect(decodeEmails(encodeEmails(emails), 4)).toEqual(emails);
  });

  it('round-trips result rows in the compact form', () => {
    const rows = [
      { status: 'deliverable' as const, score: 99, reason: null, valid: true, provider: 'google' as const },
      { status: 'undeliverable' as const, score: 0, reason: 'smtp_rejected', valid: false, provider: null },
    ];
    const text = encodeResults(rows);
    expect(text).toBe('[["deliverable",99,null,1,"google"],["undeliverable",0,"smtp_rejected",0,null]]');
    expect(decodeResults(text, 2)).toEqual(rows);
  });

  it('reads rows written before the provider existed as provider null', () => {
    expect(decodeResults('[["deliverable",99,null,1]]', 1)).toEqual([
      { status: 'deliverable', score: 99, reason: null, valid: true, provider: null },
    ]);
  });

  it.each([
    ['not JSON', '["a"', 1],
    ['a wrong count', '["a","b"]', 1],
    ['a non-string', '["a",2]', 2],
  ])('refuses addresses that are %s', (_name, text, n) => {
    expect(() => decodeEmails(text, n)).toThrow(ChunkDecodeError);
  });

  it('refuses malformed result rows', () => {
    expect(() => decodeResults('[["fine",1,null,1]]', 1)).toThrow(ChunkDecodeError);
    expect(() => decodeResults('[["unknown","50",null,0]]', 1)).toThrow(ChunkDecodeError);
  });

  it('marks, per chunk, the positions whose address occurs elsewhere in the list', () => {
    const emails = ['a@x.com', 'b@x.com', 'c@x.com', 'a@X.COM', 'A@x.com', 'b@x.com', 'd@x.com'];
    const repeats = encodeRepeats(emails, 3);
    expect(repeats).toEqual(['[0,1]', '[0,2]', null]);
    expect(repeats.map(decodeRepeats)).toEqual([[0, 1], [0, 2], []]);
    expect(decodeRepeats('garbage')).toEqual([]);
  });

  it('marks exactly the positions a plain count of addressKey marks', () => {
    const email = fc
      .tuple(
        fc.constantFrom('a', 'b', 'A', 'x.y', '"q,r"'),
        fc.constantFrom('ex.com', 'EX.com', 'ex.org', ''),
      )
      .map(([l, d]) => (d === '' ? l : `${l}@${d}`));
    fc.assert(
      fc.property(fc.array(email, { maxLength: 60 }), fc.integer({ min: 1, max: 7 }), (emails, size) => {
        const counts = new Map<string, number>();
        for (const e of emails) counts.set(addressKey(e), (counts.get(addressKey(e)) ?? 0) + 1);
        const expected: number[][] = [];
        for (let s = 0; s < emails.length; s += size) {
          expected.push(
            emails
              .slice(s, s + size)
              .map((e, i) => (counts.get(addressKey(e))! > 1 ? i : -1))
              .filter((i) => i >= 0),
          );
        }
        expect(encodeRepeats(emails, size).map(decodeRepeats)).toEqual(expected);
      }),
    );
  });
});

import { describe, expect, it } from 'vitest';
import { editDistance, POPULAR_DOMAINS, suggestCorrection } from '../../src/engine/lists/typo.js';
import { parseAddress } from '../../src/engine/syntax.js';

describe('suggestCorrection', () => {
  it.each([
    ['john', 'gmial.com', 'john@gmail.com'],
    ['john', 'gmai.com', 'john@gmail.com'],
    ['john', 'gnail.com', 'john@gmail.com'],
    ['john', 'gmaill.com', 'john@gmail.com'],
    ['x', 'hotmial.con', 'x@hotmail.com'],
    ['x', 'hotmail.co', 'x@hotmail.com'],
    ['a', 'yahoo.co', 'a@yahoo.com'],
    ['a', 'yaho.com', 'a@yahoo.com'],
    ['a', 'outlok.com', 'a@outlook.com'],
    ['a', 'icloud.co', 'a@icloud.com'],
    ['a', 'gmail.cmo', 'a@gmail.com'],
    ['a', 'comcast.ne', 'a@comcast.net'],
    ['a', 'hotmail.co.u', 'a@hotmail.co.uk'],
    ['a', 'hotmial.co.uk', 'a@hotmail.co.uk'],
  ])('%s@%s → %s', (local, domain, expected) => {
    expect(suggestCorrection(local, domain)).toBe(expected);
  });

  it.each([
    ['example.con', 'example.com'],
    ['example.cmo', 'example.com'],
    ['example.ocm', 'example.com'],
    ['example.nte', 'example.net'],
    ['example.orgg', 'example.org'],
  ])('corrects the mistyped top-level domain of an unknown domain: %s → %s', (domain, fixed) => {
    expect(suggestCorrection('a', domain)).toBe(`a@${fixed}`);
  });

  it.each(['gmail.com', 'yahoo.co.uk', 'hotmail.fr', 'mail.com', 'email.com', 'gmx.de', 'gmx.net', 'me.com'])(
    'never corrects a popular domain that is already right: %s',
    (domain) => {
      expect(suggestCorrection('a', domain)).toBeNull();
    },
  );

  it.each(['outlook.es', 'yahoo.se', 'hotmail.nl', 'gmx.fr'])(
    'does not swap one real country domain for another: %s',
    (domain) => {
      expect(suggestCorrection('a', domain)).toBeNull();
    },
  );

  it.each(['example.com', 'acme.org', 'mc.com', 'wb.de', 'cloud.com', 'company.co', 'gmail.com.au'])(
    'does not "correct" an unrelated or very short domain: %s',
    (domain) => {
      expect(suggestCorrection('a', domain)).toBeNull();
    },
  );

  it('lists only well-formed, normalised, distinct popular domains, none of which is ever corrected', () => {
    expect(new Set(POPULAR_DOMAINS).size).toBe(POPULAR_DOMAINS.length);
    for (const domain of POPULAR_DOMAINS) {
      const parsed = parseAddress(`a@${domain}`);
      expect(parsed.ok && parsed.domain).toBe(domain);
      expect(suggestCorrection('a', domain)).toBeNull();
    }
  });

  it('makes no suggestion for an address literal', () => {
    expect(suggestCorrection('a', '[127.0.0.1]')).toBeNull();
  });

  it('keeps the local part exactly as given', () => {
    expect(suggestCorrection('"John Doe"', 'gmial.com')).toBe('"John Doe"@gmail.com');
  });
});

describe('editDistance (optimal string alignment)', () => {
  it('counts insertions, deletions and substitutions', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', 'abc')).toBe(0);
  });

  it('counts a swap of adjacent characters as one edit', () => {
    expect(editDistance('gmial', 'gmail')).toBe(1);
  });

  it('does not edit a substring twice (OSA, not unrestricted Damerau-Levenshtein)', () => {
    expect(editDistance('ca', 'abc')).toBe(3);
  });

  it('stops early past the limit', () => {
    expect(editDistance('abcdefgh', 'zyxwvuts', 2)).toBe(3);
  });
});

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { editDistance, POPULAR_DOMAINS, suggestCorrection } from '../../src/engine/lists/typo.js';
import { parseAddress } from '../../src/engine/syntax.js';

/** The corpus `npm run bench:typos` measures on (written by bench/typos-corpus.ts). */
const corpus = JSON.parse(readFileSync(new URL('../kit/data/typos.json', import.meta.url), 'utf8')) as {
  typos: { typed: string; intended: string; kind: string }[];
  real: { domain: string; kind: string }[];
};
const suggested = (domain: string): string | null => suggestCorrection('a', domain)?.slice(2) ?? null;
/** Provider names of 4 characters or fewer allow only swapped and doubled letters (typo.ts). */
const shortName = (domain: string): boolean => domain.indexOf('.') <= 4;
/**
 * The corpus typos of longer names that are missed, each for a reason: v for y is no keyboard
 * slip, and mail.clm is one slip from mail.com as much as from ymail.com.
 */
const KNOWN_MISSES = ['vahoo.com', 'mail.clm'];

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
    ['a', 'gmail.cm', 'a@gmail.com'],
    ['a', 'gmail.om', 'a@gmail.com'],
    ['a', 'gmail.con', 'a@gmail.com'],
    ['a', 'hotmail.cpm', 'a@hotmail.com'],
    ['a', 'yahoo.nte', 'a@yahoo.com'],
    ['a', 'hotmail.co.ik', 'a@hotmail.co.uk'],
    ['a', 'yahoo.cp.uk', 'a@yahoo.co.uk'],
    ['a', 'hotmail.couk', 'a@hotmail.co.uk'],
    ['a', 'gamil.com', 'a@gmail.com'],
    ['a', 'hotmial.com', 'a@hotmail.com'],
    ['a', 'iclod.com', 'a@icloud.com'],
    ['a', 'gmial.cm', 'a@gmail.com'],
    ['a', 'oal.com', 'a@aol.com'],
    ['a', 'livee.com', 'a@live.com'],
    ['a', 'GMAIL.CM.', 'a@gmail.com'],
  ])('%s@%s → %s', (local, domain, expected) => {
    expect(suggestCorrection(local, domain)).toBe(expected);
  });

  it.each(['yahoo.se', 'hotmail.nl', 'outlook.es', 'live.be', 'gmx.fr', 'mail.de', 'acme.co', 'linear.app'])(
    "leaves a real domain one slip from a provider's alone: %s",
    (domain) => {
      expect(suggestCorrection('a', domain)).toBeNull();
    },
  );

  it.each([
    ['foxmail.com', 'two slips from hotmail, both on keys far apart'],
    ['bitmail.com', 'two slips from a 7-letter name'],
    ['life.com', 'a letter changed in a 4-letter name'],
    ['aok.com', 'a letter changed in a 3-letter name'],
    ['mail.ee', "a real top-level domain one slip from a 4-letter name's"],
    ['aol.co', "a real top-level domain one slip from a 3-letter name's"],
    ['hmail.us', 'more than two slips in all'],
  ])('does not correct %s: %s', (domain) => {
    expect(suggestCorrection('a', domain)).toBeNull();
  });

  it.each([
    ['example.con', 'example.com'],
    ['example.cmo', 'example.com'],
    ['example.ocm', 'example.com'],
    ['example.nte', 'example.net'],
    ['example.orgg', 'example.org'],
    ['example.cpm', 'example.com'],
    ['example.ner', 'example.net'],
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

  it.each([
    'example.com',
    'acme.org',
    'mc.com',
    'wb.de',
    'cloud.com',
    'company.co',
    'gmail.com.au',
    'example.co',
    'example.cm',
    'example.bet',
  ])('does not "correct" an unrelated or very short domain: %s', (domain) => {
    expect(suggestCorrection('a', domain)).toBeNull();
  });

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

describe('suggestCorrection on the corpus (test/kit/data/typos.json)', () => {
  it.each([...new Set(corpus.real.map((r) => r.kind))])(
    'suggests nothing for any real domain of kind %s',
    (kind) => {
      const real = corpus.real.filter((r) => r.kind === kind);
      expect(real.length).toBeGreaterThan(10);
      expect(real.filter((r) => suggested(r.domain) !== null)).toEqual([]);
    },
  );

  it.each([...new Set(corpus.typos.map((t) => t.kind))])(
    'corrects every typo of kind %s of a name longer than 4 characters to the domain meant',
    (kind) => {
      const typos = corpus.typos.filter((t) => t.kind === kind && !shortName(t.intended));
      expect(typos.length).toBeGreaterThan(10);
      const wrong = typos.filter((t) => suggested(t.typed) !== t.intended && !KNOWN_MISSES.includes(t.typed));
      expect(wrong).toEqual([]);
    },
  );

  it("never turns a typo of a short name into another provider's domain", () => {
    const typos = corpus.typos.filter((t) => shortName(t.intended));
    expect(typos.length).toBeGreaterThan(20);
    for (const t of typos) {
      const got = suggested(t.typed);
      if (got !== null && got !== t.intended) expect(POPULAR_DOMAINS).not.toContain(got);
    }
  });
});

describe('the module the widget bundles', () => {
  it('bundles for the browser (no node: import) in under 4 KB gzipped with its data (the widget has 12 KB)', async () => {
    const bundle = await build({
      entryPoints: [fileURLToPath(new URL('../../src/engine/lists/typo.ts', import.meta.url))],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      write: false,
    });
    const code = bundle.outputFiles[0]?.contents ?? new Uint8Array();
    expect(code.length).toBeGreaterThan(1000);
    expect(gzipSync(code).length).toBeLessThan(4096);
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

  it('weighs substitutions by the cost given', () => {
    expect(editDistance('gnail', 'gmail', Infinity, () => 2)).toBe(2);
  });

  it('stops early past the limit', () => {
    expect(editDistance('abcdefgh', 'zyxwvuts', 2)).toBe(3);
  });
});

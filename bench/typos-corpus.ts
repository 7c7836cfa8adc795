/**
 * `npm run bench:typos:corpus`: writes test/kit/data/typos.json, the corpus `npm run bench:typos`
 * and test/engine/typo.test.ts measure typo suggesters on. Deterministic: the same script
 * writes the same file. Two halves:
 *
 * - `typos`, each a mistyped domain and the domain meant:
 *   - `registered`: typo domains people registered, found in the `email-providers` package's
 *     list (gmial.com, hotmail.con...): picked by hand from its domains one or two slips from a
 *     big provider; the script checks each is still in the package;
 *   - `reported`: the slips named in issue 18 (gmail.cm, hotmail.co.ik, yahoo.cp.uk...);
 *   - `name`, `suffix`, `both`: keyboard slips generated from the most used provider domains
 *     (a letter left out, doubled, swapped with its neighbour, replaced by or added from a
 *     neighbouring QWERTY key; the same on the suffix, also its dot left out), sampled with a
 *     fixed seed; a slip that is itself a real domain (here or in the package's list) is left out.
 * - `real`, domains that must not be "corrected": providers of many countries, the big
 *   providers' own country domains, company domains on .co/.io/.app/.dev/.ai, real domains one
 *   slip from a big provider, and the package's `common.json` (its most common domains).
 */
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  COMPANY_DOMAINS,
  COUNTRY_PROVIDERS,
  PROVIDER_COUNTRY_DOMAINS,
  REAL_LOOKALIKES,
} from './kit/typo-real-domains.js';

const require = createRequire(import.meta.url);
const packaged = new Set(require('email-providers/all.json') as string[]);
const common = require('email-providers/common.json') as string[];

const REGISTERED: readonly (readonly [string, string])[] = [
  ['gamil.com', 'gmail.com'],
  ['gmai.com', 'gmail.com'],
  ['gmal.com', 'gmail.com'],
  ['gmial.com', 'gmail.com'],
  ['gmail.co', 'gmail.com'],
  ['gmail.om', 'gmail.com'],
  ['homail.com', 'hotmail.com'],
  ['hotmai.com', 'hotmail.com'],
  ['hotmial.com', 'hotmail.com'],
  ['hotmails.com', 'hotmail.com'],
  ['hotmail.con', 'hotmail.com'],
  ['hotmail.cm', 'hotmail.com'],
  ['gotmail.com', 'hotmail.com'],
  ['yaho.com', 'yahoo.com'],
  ['vahoo.com', 'yahoo.com'],
  ['yahoo.om', 'yahoo.com'],
  ['duam.net', 'daum.net'],
];

const REPORTED: readonly (readonly [string, string])[] = [
  ['gmail.cm', 'gmail.com'],
  ['gmail.con', 'gmail.com'],
  ['hotmail.cpm', 'hotmail.com'],
  ['yahoo.nte', 'yahoo.com'],
  ['hotmail.co.ik', 'hotmail.co.uk'],
  ['yahoo.cp.uk', 'yahoo.co.uk'],
  ['hotmail.couk', 'hotmail.co.uk'],
  ['gmaill.com', 'gmail.com'],
  ['gnail.com', 'gmail.com'],
  ['outlok.com', 'outlook.com'],
  ['iclod.com', 'icloud.com'],
];

/** The domains slips are generated from, the most used first. */
const TARGETS = [
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'icloud.com',
  'aol.com',
  'live.com',
  'msn.com',
  'googlemail.com',
  'hotmail.co.uk',
  'yahoo.co.uk',
  'hotmail.fr',
  'yahoo.fr',
  'ymail.com',
  'comcast.net',
  'verizon.net',
  'sbcglobal.net',
  'att.net',
  'protonmail.com',
  'btinternet.com',
  'web.de',
  'gmx.de',
];

const ROWS = ['1234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'];

function neighbours(key: string): string[] {
  const r = ROWS.findIndex((row) => row.includes(key));
  if (r < 0) return [];
  const c = ROWS[r]!.indexOf(key);
  const at = (row: number, col: number): string => ROWS[row]?.[col] ?? '';
  return [at(r, c - 1), at(r, c + 1), at(r - 1, c), at(r - 1, c + 1), at(r + 1, c - 1), at(r + 1, c)].filter(
    (k) => /[a-z0-9]/.test(k),
  );
}

/** Every one-slip variant of `s` (never touching a dot but by leaving it out). */
function slips(s: string): string[] {
  const out = new Set<string>();
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    out.add(s.slice(0, i) + s.slice(i + 1));
    if (ch === '.') continue;
    out.add(s.slice(0, i) + ch + s.slice(i));
    const next = s[i + 1];
    if (next !== undefined && next !== '.' && next !== ch)
      out.add(s.slice(0, i) + next + ch + s.slice(i + 2));
    for (const k of neighbours(ch)) {
      out.add(s.slice(0, i) + k + s.slice(i + 1));
      out.add(s.slice(0, i + 1) + k + s.slice(i + 1));
    }
  }
  out.delete(s);
  return [...out].filter((x) => /^[a-z0-9]/.test(x) && !x.endsWith('.') && !x.includes('..'));
}

/** mulberry32: a small seeded generator, so the sample is the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sample<T>(items: readonly T[], count: number, next: () => number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < count && pool.length > 0) out.push(...pool.splice(Math.floor(next() * pool.length), 1));
  return out;
}

const real = new Map<string, string>();
const addReal = (kind: string, domains: readonly string[]): void => {
  for (const d of domains) if (!real.has(d)) real.set(d, kind);
};
addReal('country-provider', COUNTRY_PROVIDERS);
addReal('provider-country-domain', PROVIDER_COUNTRY_DOMAINS);
addReal('company', COMPANY_DOMAINS);
addReal('lookalike', REAL_LOOKALIKES);
addReal(
  'common',
  common.filter((d) => !REGISTERED.some(([typed]) => typed === d)),
);

const typos = new Map<string, { intended: string; kind: string }>();
for (const [typed, intended] of REGISTERED) {
  if (!packaged.has(typed)) throw new Error(`${typed} is no longer in email-providers/all.json`);
  typos.set(typed, { intended, kind: 'registered' });
}
for (const [typed, intended] of REPORTED) typos.set(typed, { intended, kind: 'reported' });

const next = random(18);
const isFree = (d: string): boolean => !real.has(d) && !packaged.has(d) && !typos.has(d);
for (const target of TARGETS) {
  const dot = target.indexOf('.');
  const name = target.slice(0, dot);
  const suffix = target.slice(dot + 1);
  const nameSlips = slips(name).map((n) => `${n}.${suffix}`);
  const suffixSlips = slips(suffix).map((s) => (s.startsWith('.') ? `${name}${s}` : `${name}.${s}`));
  const both = sample(slips(name), 3, next).map((n) => `${n}.${sample(slips(suffix), 1, next)[0] ?? suffix}`);
  const add = (kind: string, list: string[], count: number): void => {
    for (const typed of sample(list.filter(isFree), count, next))
      typos.set(typed, { intended: target, kind });
  };
  add('name', nameSlips, 8);
  add('suffix', suffixSlips, 5);
  add('both', both, 2);
}

const corpus = {
  about: 'Written by bench/typos-corpus.ts (npm run bench:typos:corpus); see that file for the sources.',
  typos: [...typos].map(([typed, { intended, kind }]) => ({ typed, intended, kind })),
  real: [...real].map(([domain, kind]) => ({ domain, kind })),
};
const file = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'kit', 'data', 'typos.json');
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, `${JSON.stringify(corpus, null, 1)}\n`);
console.log(`${file}: ${corpus.typos.length} typos, ${corpus.real.length} real domains`);

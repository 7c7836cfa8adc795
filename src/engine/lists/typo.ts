/**
 * `did_you_mean`: a likely correction for a mistyped mail provider's domain (john@gmial.com →
 * john@gmail.com, hotmail.co.ik → hotmail.co.uk) or a top-level domain that exists nowhere
 * (.con → .com). Shared with the browser widget: no `node:` imports here or in typo-data.ts.
 *
 * Written here rather than taken from a library: on test/kit/data/typos.json, mailcheck and
 * @zootools/email-spell-checker suggest a change for 39% and 18% of the real domains (yahoo.se,
 * outlook.es, company domains on .co), this one for none, and correct a similar share of the
 * typos (`npm run bench:typos`, figures in docs/benchmarks.md).
 */
import { LONGER_TLDS_NEAR_GENERIC, LOOKALIKES, PROVIDERS, TLDS_OF_THREE, TLDS_OF_TWO } from './typo-data.js';

interface Provider {
  name: string;
  /** Real suffixes, the main one first. */
  suffixes: readonly string[];
}

const PROVIDER_LIST: readonly Provider[] = PROVIDERS.map((entry) => {
  const [name = '', ...suffixes] = entry.split(' ');
  return { name, suffixes };
});

/** Real mail domains, the most used first: every provider's name under each of its suffixes. */
export const POPULAR_DOMAINS: readonly string[] = PROVIDER_LIST.flatMap((p) =>
  p.suffixes.map((suffix) => `${p.name}.${suffix}`),
);
const KNOWN: ReadonlySet<string> = new Set([...POPULAR_DOMAINS, ...LOOKALIKES]);
const REAL_TLDS: ReadonlySet<string> = new Set([
  ...(TLDS_OF_TWO.match(/../g) ?? []),
  ...(TLDS_OF_THREE.match(/.../g) ?? []),
  ...LONGER_TLDS_NEAR_GENERIC,
]);
const GENERIC_TLDS = ['com', 'net', 'org'] as const;
/** At most two slips in all: gmial.cm and hotmial.con are corrected, hmail.us is not hotmail.es. */
const MAX_COST = 2;

/**
 * Suggests a corrected address, or null when the domain looks right or unlike any provider's.
 * Expects the parsed local part and the domain (any case, an optional trailing dot).
 */
export function suggestCorrection(local: string, domain: string): string | null {
  let lower = domain.toLowerCase();
  if (lower.endsWith('.')) lower = lower.slice(0, -1);
  const dot = lower.indexOf('.');
  if (lower.startsWith('[') || KNOWN.has(lower) || dot <= 0) return null;
  const fixed = closestProvider(lower.slice(0, dot), lower.slice(dot + 1)) ?? fixTopLevel(lower);
  return fixed === null ? null : `${local}@${fixed}`;
}

/**
 * The provider domain nearest to `name.rest`, by keyboard-weighted distance (slipDistance).
 * The name may differ by a cost that grows with its length (nameAllowance); the suffix by one
 * slip (co.ik, couk, cm, con), or it may be a top-level domain that exists nowhere on a name
 * typed right (yahoo.nte → yahoo.com); two slips at most in all (MAX_COST).
 */
function closestProvider(name: string, rest: string): string | null {
  let best: string | null = null;
  let bestCost = Infinity;
  for (const provider of PROVIDER_LIST) {
    if (Math.abs(name.length - provider.name.length) > 2) continue; // cheap, before nameAllowance
    const allowed = nameAllowance(provider.name, name);
    if (Math.abs(name.length - provider.name.length) > allowed) continue;
    const nameCost = slipDistance(name, provider.name, allowed);
    if (nameCost > allowed) continue;
    const suffix = closestSuffix(rest, provider, nameCost === 0);
    if (suffix === null) continue;
    const cost = nameCost + suffix.cost;
    if (cost <= MAX_COST && cost < bestCost) {
      best = `${provider.name}.${suffix.suffix}`;
      bestCost = cost;
    }
  }
  return best;
}

/**
 * How far a typed name may be from a provider's. Short names are dense: web.de, gmx.de, wp.pl
 * and thousands of real short names sit one slip apart, and a letter more, fewer or changed in
 * a four-letter one makes a real word (life, love, five for live). So names of 3 or 4
 * characters allow only two letters swapped or one doubled (oal, aoll, lvie, livee), shorter
 * ones nothing; one slip up to 8 characters; two beyond (two slips on hotmail or fastmail
 * make other real providers' names: bitmail, eastmail, lastmail).
 */
function nameAllowance(providerName: string, typed: string): number {
  const length = providerName.length;
  if (length <= 2) return 0;
  if (length <= 4) return sameLetters(providerName, typed) || isDoubling(providerName, typed) ? 1 : 0;
  return length <= 8 ? 1 : 2;
}

function sameLetters(a: string, b: string): boolean {
  return a.length === b.length && [...a].sort().join('') === [...b].sort().join('');
}

/** True when `typed` is `name` with one of its letters typed twice. */
function isDoubling(name: string, typed: string): boolean {
  if (typed.length !== name.length + 1) return false;
  for (let i = 0; i < name.length; i++) {
    if (typed === name.slice(0, i + 1) + name.slice(i)) return true;
  }
  return false;
}

/**
 * The provider's suffix nearest to the typed one, with its cost. A suffix one slip from a real
 * one costs its distance; a top-level domain that exists nowhere (nte) costs 1 towards its
 * generic target (net) and 2 towards the provider's main suffix, which only a name typed right
 * may pay. A real top-level domain one slip away (gmail.co, gmail.cm) is corrected only on a
 * provider name of 5 characters or more: aol.co, mail.ee or live.cl may be someone's real domain;
 * on shorter names only one that exists nowhere (web.dr, aol.cpm).
 */
function closestSuffix(
  rest: string,
  provider: Provider,
  exactName: boolean,
): { suffix: string; cost: number } | null {
  const junkTarget = nowhereTldTarget(rest);
  const nowhere = isNowhereTld(rest.slice(rest.lastIndexOf('.') + 1));
  let best: { suffix: string; cost: number } | null = null;
  for (const suffix of provider.suffixes) {
    let cost = slipDistance(rest, suffix, 1);
    if (cost > 1) cost = Infinity;
    else if (cost === 1 && !nowhere && provider.name.length <= 4) cost = Infinity;
    if (junkTarget === suffix) cost = Math.min(cost, 1);
    if (best === null || cost < best.cost) best = { suffix, cost };
  }
  const main = provider.suffixes[0];
  if (junkTarget !== null && exactName && main !== undefined && (best === null || best.cost > 2)) {
    best = { suffix: main, cost: 2 };
  }
  return best !== null && best.cost <= 2 ? best : null;
}

/** Replaces a top-level domain that exists nowhere but is one slip from com/net/org. */
function fixTopLevel(domain: string): string | null {
  const dot = domain.lastIndexOf('.');
  const target = nowhereTldTarget(domain.slice(dot + 1));
  return target === null ? null : `${domain.slice(0, dot)}.${target}`;
}

/**
 * True when a top-level domain exists nowhere. All real ones of up to three letters are known;
 * a longer one is known to be no real one only when it is a slip of com, net or org (comm).
 */
function isNowhereTld(tld: string): boolean {
  return tld.length <= 3 ? !REAL_TLDS.has(tld) : nowhereTldTarget(tld) !== null;
}

/** `com`, `net` or `org` when `tld` is one slip from it and is no real top-level domain. */
function nowhereTldTarget(tld: string): string | null {
  if (tld.includes('.') || REAL_TLDS.has(tld)) return null;
  for (const generic of GENERIC_TLDS) {
    if (tld !== generic && editDistance(tld, generic, 1) <= 1) return generic;
  }
  return null;
}

const KEY_ROWS = ['1234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'];
const VOWELS = 'aeiou';
/** KEY_COST[a * 128 + b]: keyboardCost for two ASCII characters, filled once. */
const KEY_COST = new Uint8Array(128 * 128).fill(2);
{
  const position = new Map<string, readonly [number, number]>();
  KEY_ROWS.forEach((row, r) => [...row].forEach((key, c) => position.set(key, [r, c])));
  for (const [a, [ra, ca]] of position) {
    for (const [b, [rb, cb]] of position) {
      const dr = rb - ra;
      const dc = cb - ca;
      const near =
        (dr === 0 && Math.abs(dc) === 1) ||
        (dr === -1 && (dc === 0 || dc === 1)) ||
        (dr === 1 && (dc === 0 || dc === -1));
      const vowels = VOWELS.includes(a) && VOWELS.includes(b);
      if (near || vowels) KEY_COST[a.charCodeAt(0) * 128 + b.charCodeAt(0)] = 1;
    }
  }
}

/**
 * What it costs to type `b` instead of `a` (character codes): 1 for a neighbouring key on a
 * QWERTY keyboard (gnail, gmaul) or one vowel for another (gmeil), 2 otherwise (foxmail is not
 * hotmail).
 */
function keyboardCost(a: number, b: number): number {
  return a < 128 && b < 128 ? (KEY_COST[a * 128 + b] ?? 2) : 2;
}

/** Keyboard-weighted distance: editDistance with keyboardCost for substitutions. */
function slipDistance(a: string, b: string, limit: number): number {
  return editDistance(a, b, limit, keyboardCost);
}

const unitCost = (): number => 1;
/** Three rows of the distance table, reused by every call (the module's only mutable state). */
let table = new Int32Array(3 * 64);

/**
 * Damerau-Levenshtein distance, optimal string alignment variant: insertions, deletions and
 * transpositions of adjacent characters (the typical typing slips) cost 1, a substitution
 * `substitutionCost` of the two character codes (1 unless given). Returns more than `limit` as
 * soon as the distance must exceed it.
 */
export function editDistance(
  a: string,
  b: string,
  limit = Infinity,
  substitutionCost: (from: number, to: number) => number = unitCost,
): number {
  const width = b.length + 1;
  if (table.length < 3 * width) table = new Int32Array(6 * width);
  const t = table;
  let prev2 = 0;
  let prev = width;
  let row = 2 * width;
  for (let j = 0; j < width; j++) t[prev + j] = j;
  for (let i = 1; i <= a.length; i++) {
    t[row] = i;
    let rowMin = i;
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j < width; j++) {
      const bj = b.charCodeAt(j - 1);
      const cost = ai === bj ? 0 : substitutionCost(ai, bj);
      let d = Math.min((t[prev + j] ?? 0) + 1, (t[row + j - 1] ?? 0) + 1, (t[prev + j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj) {
        d = Math.min(d, (t[prev2 + j - 2] ?? 0) + 1);
      }
      t[row + j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > limit) return limit + 1;
    [prev2, prev, row] = [prev, row, prev2];
  }
  return t[prev + width - 1] ?? 0;
}

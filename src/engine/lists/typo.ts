/**
 * `did_you_mean`: a likely correction for a mistyped popular mail domain (john@gmial.com →
 * john@gmail.com) or a mistyped top-level domain (.con → .com).
 *
 * Written here rather than taken from a library: mailcheck, the usual choice, is unmaintained
 * and built as a browser global, and nothing maintained does the same job. The list is ours
 * because the packaged free-provider list also contains typo domains (gmial.com, hotmail.con)
 * that people actually registered, so it cannot tell a typo from a real provider.
 */

/**
 * Correct mail domains, the most used first (a tie in distance goes to the earlier one). Real
 * domains that look like typos of others (mail.com, email.com, gmx.*) are listed too, so they
 * are never "corrected".
 */
export const POPULAR_DOMAINS: readonly string[] = [
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
  'hotmail.de',
  'hotmail.it',
  'hotmail.es',
  'yahoo.de',
  'yahoo.es',
  'yahoo.it',
  'yahoo.ca',
  'yahoo.co.in',
  'yahoo.com.br',
  'live.co.uk',
  'live.fr',
  'outlook.fr',
  'outlook.de',
  'me.com',
  'mac.com',
  'ymail.com',
  'rocketmail.com',
  'protonmail.com',
  'proton.me',
  'pm.me',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'gmx.at',
  'web.de',
  'mail.com',
  'email.com',
  'mail.ru',
  'yandex.ru',
  'yandex.com',
  'zoho.com',
  'fastmail.com',
  'tutanota.com',
  'tuta.io',
  'hey.com',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'bellsouth.net',
  'cox.net',
  'charter.net',
  'earthlink.net',
  'optonline.net',
  'btinternet.com',
  'sky.com',
  'virginmedia.com',
  'orange.fr',
  'wanadoo.fr',
  'free.fr',
  'laposte.net',
  'sfr.fr',
  't-online.de',
  'freenet.de',
  'libero.it',
  'virgilio.it',
  'seznam.cz',
  'wp.pl',
  'o2.pl',
  'interia.pl',
  'onet.pl',
  'rambler.ru',
  'bk.ru',
  'list.ru',
  'inbox.ru',
  'ukr.net',
  'uol.com.br',
  'bol.com.br',
  'terra.com.br',
  'qq.com',
  '163.com',
  '126.com',
  'sina.com',
  'naver.com',
  'daum.net',
  'hanmail.net',
  'yahoo.co.jp',
  'rediffmail.com',
  'bigpond.com',
  'shaw.ca',
  'rogers.com',
  'sympatico.ca',
];
/** Real domains one slip from a popular one, never "corrected" but never suggested either. */
const LOOKALIKES: readonly string[] = ['cloud.com', 'mail.de', 'gmx.fr', 'live.de', 'email.de'];
const KNOWN: ReadonlySet<string> = new Set([...POPULAR_DOMAINS, ...LOOKALIKES]);
const POPULAR_PARTS = POPULAR_DOMAINS.map((domain) => {
  const dot = domain.lastIndexOf('.');
  return { domain, name: domain.slice(0, dot), tld: domain.slice(dot + 1) };
});

/** Top-level domains that do not exist but are common slips for one that does. */
const TLD_TYPOS: Readonly<Record<string, string>> = {
  con: 'com',
  cmo: 'com',
  ocm: 'com',
  cpm: 'com',
  vom: 'com',
  xom: 'com',
  clm: 'com',
  cim: 'com',
  comm: 'com',
  coom: 'com',
  cojm: 'com',
  nte: 'net',
  ent: 'net',
  nett: 'net',
  ner: 'net',
  ogr: 'org',
  rog: 'org',
  orgg: 'org',
  prg: 'org',
};

/**
 * Suggests a corrected address, or null when the domain looks right or unlike any popular
 * domain. Expects the parsed local part and the lower-cased domain.
 */
export function suggestCorrection(local: string, domain: string): string | null {
  const lower = domain.toLowerCase();
  const dot = lower.lastIndexOf('.');
  if (lower.startsWith('[') || KNOWN.has(lower) || dot <= 0) return null;
  const name = lower.slice(0, dot);
  const tld = lower.slice(dot + 1);
  const popular = closestPopular(name, tld);
  if (popular !== null) return `${local}@${popular}`;
  const fixedTld = TLD_TYPOS[tld];
  return fixedTld === undefined ? null : `${local}@${name}.${fixedTld}`;
}

/**
 * The popular domain nearest to `name.tld`. The top-level domain must be the same, a known slip
 * of it, or it with its last letter missing (gmail.co); a different real one is never
 * "corrected" (outlook.es and yahoo.se are real). The name may differ by a number of edits that
 * grows with its length: none up to 3 characters (web.de, gmx.de and a thousand real
 * three-letter domains sit one slip apart), one up to 6, two beyond.
 */
function closestPopular(name: string, tld: string): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const popular of POPULAR_PARTS) {
    if (!tldMatches(tld, popular.tld)) continue;
    const shorter = Math.min(name.length, popular.name.length);
    const allowed = shorter <= 3 ? 0 : shorter <= 6 ? 1 : 2;
    if (Math.abs(name.length - popular.name.length) > allowed) continue;
    const d = editDistance(name, popular.name, allowed);
    if (d <= allowed && d < bestDistance) {
      best = popular.domain;
      bestDistance = d;
    }
  }
  return best;
}

function tldMatches(typed: string, target: string): boolean {
  return (
    typed === target ||
    TLD_TYPOS[typed] === target ||
    (typed.length + 1 === target.length && target.startsWith(typed))
  );
}

/**
 * Damerau-Levenshtein distance, optimal string alignment variant: insertions, deletions,
 * substitutions and transpositions of adjacent characters (the typical typing slips) cost 1.
 * Returns `limit + 1` as soon as the distance must exceed `limit`.
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  let prev2: number[] = [];
  let prev: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row: number[] = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, (prev2[j - 2] ?? 0) + 1);
      }
      row.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > limit) return limit + 1;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length] ?? 0;
}

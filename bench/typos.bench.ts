/**
 * `npm run bench:typos`: how well three typo suggesters correct test/kit/data/typos.json (written
 * by bench/typos-corpus.ts): mailverdict's own (src/engine/lists/typo.ts), mailcheck and
 * @zootools/email-spell-checker, each with its default data. For each it prints, over the
 * mistyped domains, the share corrected to the domain meant, corrected to another one, and left
 * alone, by kind; over the real domains, the share it suggested a change for; and the time per
 * domain. Last, the size of typo.ts and its data as the widget bundles them (esbuild, minified,
 * gzipped).
 *
 *   --show mailverdict   also list that suggester's misses and false suggestions
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import spellChecker from '@zootools/email-spell-checker';
import { suggestCorrection } from '../src/engine/lists/typo.js';

interface Corpus {
  typos: { typed: string; intended: string; kind: string }[];
  real: { domain: string; kind: string }[];
}
interface MailcheckResult {
  domain: string;
}
interface Mailcheck {
  run(options: { email: string; suggested: (s: MailcheckResult) => void; empty: () => void }): void;
}

const require = createRequire(import.meta.url);
const corpus = require('../test/kit/data/typos.json') as Corpus;
const mailcheck = require('mailcheck') as Mailcheck;
const { values } = parseArgs({ options: { show: { type: 'string' } } });

const LOCAL = 'anna';
/** Each suggester as a function from a domain to the suggested domain, or null. */
const SUGGESTERS: Record<string, (domain: string) => string | null> = {
  mailverdict: (domain) => suggestCorrection(LOCAL, domain)?.slice(LOCAL.length + 1) ?? null,
  mailcheck: (domain) => {
    let found: string | null = null;
    mailcheck.run({
      email: `${LOCAL}@${domain}`,
      suggested: (s) => (found = s.domain),
      empty: () => undefined,
    });
    return found;
  },
  'email-spell-checker': (domain) => spellChecker.run({ email: `${LOCAL}@${domain}` })?.domain ?? null,
};

const pct = (n: number, of: number): string => `${((100 * n) / of).toFixed(1)}%`.padStart(6);
const kinds = [...new Set(corpus.typos.map((t) => t.kind))];
const realKinds = [...new Set(corpus.real.map((r) => r.kind))];

console.log(
  `corpus: ${corpus.typos.length} typos, ${corpus.real.length} real domains; load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  '\nsuggester              corrected  wrong  missed   false suggestions on real domains   µs/domain',
);
for (const [name, suggest] of Object.entries(SUGGESTERS)) {
  for (const t of corpus.typos) suggest(t.typed); // warm-up, so that no suggester pays for the JIT
  const started = performance.now();
  let right = 0;
  let wrong = 0;
  const misses: string[] = [];
  const byKind = new Map<string, number>();
  for (const t of corpus.typos) {
    const got = suggest(t.typed);
    if (got === t.intended) {
      right++;
      byKind.set(t.kind, (byKind.get(t.kind) ?? 0) + 1);
    } else {
      if (got !== null) wrong++;
      misses.push(`${t.kind} ${t.typed} → ${got ?? '(none)'}, meant ${t.intended}`);
    }
  }
  const falses = corpus.real.flatMap((r) => {
    const got = suggest(r.domain);
    return got === null || got === r.domain ? [] : [{ ...r, got }];
  });
  const n = corpus.typos.length;
  const micros = ((performance.now() - started) * 1000) / (n + corpus.real.length);
  const falseShare = `${pct(falses.length, corpus.real.length)} (${falses.length} of ${corpus.real.length})`;
  console.log(
    `${name.padEnd(22)} ${pct(right, n)} ${pct(wrong, n)} ${pct(n - right - wrong, n)}   ${falseShare.padEnd(34)}${micros.toFixed(1).padStart(8)}`,
  );
  const kindLine = kinds.map((k) => {
    const total = corpus.typos.filter((t) => t.kind === k).length;
    return `${k} ${byKind.get(k) ?? 0}/${total}`;
  });
  const realLine = realKinds.map((k) => {
    const total = corpus.real.filter((r) => r.kind === k).length;
    return `${k} ${falses.filter((f) => f.kind === k).length}/${total}`;
  });
  console.log(`    corrected by kind: ${kindLine.join(', ')}`);
  console.log(`    false suggestions by kind: ${realLine.join(', ')}`);
  if (values.show === name) {
    for (const m of misses) console.log(`    miss: ${m}`);
    for (const f of falses) console.log(`    false: ${f.kind} ${f.domain} → ${f.got}`);
  }
}

const bundle = await build({
  entryPoints: [new URL('../src/engine/lists/typo.ts', import.meta.url).pathname],
  bundle: true,
  minify: true,
  format: 'esm',
  write: false,
});
const code = bundle.outputFiles[0]?.contents ?? new Uint8Array();
console.log(
  `\ntypo.ts + typo-data.ts bundled: ${code.length} B minified, ${gzipSync(code).length} B gzipped`,
);

/**
 * `npm run fuzz -- --runs 100000 [--seed N]`: the API fuzzer of test/kit/api-fuzz.ts at length.
 * Prints runs, failures (with the shrunk counterexample), seconds and the statuses seen.
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { createHarness } from '../test/kit/api-harness.js';
import { checkOne, fuzzRequest } from '../test/kit/api-fuzz.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10000' }, seed: { type: 'string' } },
});
const runs = Number(values.runs);
const h = await createHarness({
  account: { plan: 'scale', rateLimit: 1_000_000 },
  flags: { authFailureRateLimit: '0' },
});
const statuses = new Map<number, number>();
const original = h.inject.bind(h);
h.inject = async (o) => {
  const res = await original(o);
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
  return res;
};
const started = performance.now();
const details = await fc.check(
  fc.asyncProperty(fuzzRequest(), (r) => checkOne(h, r)),
  { numRuns: runs, ...(values.seed === undefined ? {} : { seed: Number(values.seed) }) },
);
const seconds = (performance.now() - started) / 1000;
await h.close();
console.log(
  `fuzz: ${details.numRuns} runs, ${details.failed ? 1 : 0} failures, ${seconds.toFixed(1)} s (${(details.numRuns / seconds).toFixed(0)} runs/s), seed ${details.seed}`,
);
console.log(
  `statuses: ${[...statuses.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}×${n}`)
    .join(' ')}`,
);
if (details.failed) {
  console.log(`counterexample: ${JSON.stringify(details.counterexample)}\n${String(details.errorInstance)}`);
  process.exitCode = 1;
}

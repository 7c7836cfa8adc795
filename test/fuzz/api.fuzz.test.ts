import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createHarness, type Harness } from '../kit/api-harness.js';
import { checkOne, fuzzRequest } from '../kit/api-fuzz.js';

/** A bounded run; `npm run fuzz -- --runs N` runs the same property at length. */
const RUNS = Number(process.env.MAILVERDICT_FUZZ_RUNS ?? 400);

let h: Harness;
beforeAll(async () => {
  h = await createHarness({
    account: { plan: 'scale', rateLimit: 1_000_000 },
    flags: { authFailureRateLimit: '0' },
  });
});
afterAll(async () => {
  await h.close();
});

describe('the API under random requests', () => {
  it(`never answers 5xx, always with the envelope and a request id, and counts only accepted live work (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fuzzRequest(), (r) => checkOne(h, r)),
      { numRuns: RUNS },
    );
  }, 120_000);
});

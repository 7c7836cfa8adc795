/**
 * One definition of an address's identity (engine/syntax.ts `addressIdentity`): an internationalised
 * domain written in Unicode and the same domain in punycode are one address wherever mailverdict
 * tells addresses apart: the result cache, the batch grouping, the outcomes' key and the chunks'
 * repeat finder.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR, ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { groupAddresses } from '../../src/engine/batch/group.js';
import { identityOf, parseAddress } from '../../src/engine/syntax.js';
import type { Verifier } from '../../src/engine/types.js';
import { createVerifier } from '../../src/engine/verifier.js';
import { outcomeAddress } from '../../src/services/outcomes/address-key.js';
import {
  cacheKey,
  createMemoryResultStore,
  createResultCache,
} from '../../src/services/verify/result-cache.js';
import { addressKey, decodeRepeats, encodeRepeats } from '../../src/store/chunk-codec.js';

const UNICODE = 'jane@Bücher.example';
const PUNYCODE = 'jane@xn--bcher-kva.example';

let verifier: Verifier;
beforeAll(() => {
  verifier = createVerifier(loadConfig({}, {}).engine);
});
afterAll(async () => {
  await verifier.close();
});

describe("an address's identity", () => {
  it('is the same for a domain in Unicode and in punycode', () => {
    const unicode = parseAddress(UNICODE);
    const punycode = parseAddress(PUNYCODE);
    expect(unicode.ok && punycode.ok).toBe(true);
    expect(unicode.ok && unicode.address).toBe(PUNYCODE);
    expect(punycode.ok && punycode.address).toBe(PUNYCODE);
    expect(identityOf(UNICODE)).toBe(PUNYCODE);
    expect(identityOf(PUNYCODE)).toBe(PUNYCODE);
  });

  it('is, for any string that parses, the address parseAddress gives, without parsing ASCII domains', () => {
    const local = fc.constantFrom('jane', 'Jane', 'j.doe+tag', '"a@b"', 'ünï');
    const domain = fc.constantFrom(
      'example.com',
      'EXAMPLE.com',
      'Bücher.example',
      'xn--bcher-kva.example',
      'XN--BCHER-KVA.example',
      '例子.测试',
      '[127.0.0.1]',
      '[IPv6:::1]',
      '[ipv6:::1]',
    );
    fc.assert(
      fc.property(local, domain, (l, d) => {
        const input = `${l}@${d}`;
        const parsed = parseAddress(input);
        if (parsed.ok) expect(identityOf(input)).toBe(parsed.address);
      }),
    );
  });

  it('names one result cache entry: stored under the Unicode form, found under the punycode form', async () => {
    expect(cacheKey('acc_1', UNICODE)).toBe(cacheKey('acc_1', PUNYCODE));
    const clock = new ManualClock();
    const cache = createResultCache({
      store: createMemoryResultStore(10),
      ttlMs: { deliverable: HOUR, undeliverable: HOUR, risky: HOUR, unknown: 0 },
      clock,
    });
    const result = { ...verifier.verifyOffline(UNICODE), status: 'deliverable' as const, reason: null };
    await cache.store('acc_1', [result]);
    const [hit] = await cache.lookUp('acc_1', [PUNYCODE]);
    expect(hit?.result.email).toBe(PUNYCODE);
  });

  it('makes one group of a batch: one probe for both forms', () => {
    const grouped = groupAddresses([UNICODE, 'other@example.com', PUNYCODE]);
    expect(grouped.unique.map((u) => [u.address, u.indexes])).toEqual([
      [PUNYCODE, [0, 2]],
      ['other@example.com', [1]],
    ]);
  });

  it('makes one outcome key: a bounce reported in one form reaches the verification of the other', () => {
    const unicode = outcomeAddress('acc_1', UNICODE);
    const punycode = outcomeAddress('acc_1', PUNYCODE.toUpperCase());
    expect('key' in unicode && unicode.key).toBe('key' in punycode && punycode.key);
  });

  it("marks both forms as one repeated address in a job's chunks", () => {
    expect(addressKey(UNICODE)).toBe(addressKey(PUNYCODE));
    const repeats = encodeRepeats([UNICODE, 'other@example.com', PUNYCODE], 3);
    expect(repeats.map(decodeRepeats)).toEqual([[0, 2]]);
  });
});

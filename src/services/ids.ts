import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * `length` characters of base62 from the CSPRNG. Bytes >= 248 are dropped (rejection sampling)
 * so that every character is equally likely: 248 = 4 * 62.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A prefixed identifier such as `acct_3kTq…` (16 base62 characters: 95 bits). */
export function newId(prefix: 'acct' | 'key'): string {
  return `${prefix}_${randomBase62(16)}`;
}

/**
 * The sealing of secrets at rest (store/secret-box.ts): AES-256-GCM with a random nonce, the key id
 * and the column in the sealed value, and no plaintext fallback for a value that looks sealed.
 */
import { describe, expect, it } from 'vitest';
import {
  createSecretBox,
  generateSecretKeyText,
  parseSecretKey,
  SecretKeyError,
  type SecretKey,
} from '../../src/store/secret-box.js';

const newKey = (): SecretKey => parseSecretKey(generateSecretKeyText(), 'test');
const COLUMN = 'accounts.webhook_secret';

describe('the secret box', () => {
  it('derives the same key from the same store key in every process, another per purpose and per key', () => {
    const text = generateSecretKeyText();
    const one = createSecretBox(parseSecretKey(text, 'one process'));
    const other = createSecretBox(parseSecretKey(text, 'another process'));
    const key = one.deriveKey('sign-in-challenge');
    expect(key).toHaveLength(32);
    expect(other.deriveKey('sign-in-challenge').equals(key)).toBe(true);
    expect(one.deriveKey('sign-in-challenge-key').equals(key)).toBe(false);
    expect(createSecretBox(newKey()).deriveKey('sign-in-challenge').equals(key)).toBe(false);
    expect(key.equals(parseSecretKey(text, 'raw').key)).toBe(false);
  });

  it('derives from a random key of its own without a store key, the same for the box’s life', () => {
    const box = createSecretBox(null);
    expect(box.deriveKey('sign-in-challenge').equals(box.deriveKey('sign-in-challenge'))).toBe(true);
    expect(
      createSecretBox(null).deriveKey('sign-in-challenge').equals(box.deriveKey('sign-in-challenge')),
    ).toBe(false);
  });

  it('opens what it sealed, and seals the same secret differently each time', () => {
    const box = createSecretBox(newKey());
    const a = box.seal(COLUMN, 'whsec_secret');
    const b = box.seal(COLUMN, 'whsec_secret');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^enc:v1:[A-Za-z0-9_-]{8}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    expect(a).not.toContain('secret');
    expect(box.open(COLUMN, a)).toBe('whsec_secret');
    expect(box.open(COLUMN, b)).toBe('whsec_secret');
  });

  it('refuses an altered ciphertext, tag or nonce', () => {
    const box = createSecretBox(newKey());
    const sealed = box.seal(COLUMN, 'whsec_secret');
    const parts = sealed.split(':');
    const flip = (text: string, at: number): string => {
      const bytes = Buffer.from(text, 'base64url');
      bytes[at] = bytes[at]! ^ 1;
      return bytes.toString('base64url');
    };
    const cipherText = parts[4]!;
    for (const altered of [
      [...parts.slice(0, 4), flip(cipherText, 0)].join(':'),
      [...parts.slice(0, 4), flip(cipherText, Buffer.from(cipherText, 'base64url').length - 1)].join(':'),
      [...parts.slice(0, 3), flip(parts[3]!, 0), cipherText].join(':'),
      [...parts.slice(0, 4), cipherText.slice(0, 10)].join(':'),
    ])
      expect(() => box.open(COLUMN, altered)).toThrow(SecretKeyError);
  });

  it('refuses a sealed value moved to another column', () => {
    const box = createSecretBox(newKey());
    const sealed = box.seal('member_two_factor.secret', 'JBSWY3DPEHPK3PXP');
    expect(() => box.open(COLUMN, sealed)).toThrow(/does not open .*moved from another column/);
  });

  it('refuses, naming the key, a value sealed with a key it does not have: never garbage, never the stored text', () => {
    const first = newKey();
    const sealed = createSecretBox(first).seal(COLUMN, 'whsec_secret');
    const other = createSecretBox(newKey());
    expect(() => other.open(COLUMN, sealed)).toThrow(SecretKeyError);
    expect(() => other.open(COLUMN, sealed)).toThrow(new RegExp(`sealed with key ${first.id}`));
  });

  it('refuses a value with the right key id whose key was replaced by another', () => {
    const key = newKey();
    const sealed = createSecretBox(key).seal(COLUMN, 'whsec_secret');
    const impostor: SecretKey = { id: key.id, key: newKey().key };
    expect(() => createSecretBox(impostor).open(COLUMN, sealed)).toThrow(/does not open with key/);
  });

  it('opens a previous key’s values and seals with the current one', () => {
    const old = newKey();
    const current = newKey();
    const sealed = createSecretBox(old).seal(COLUMN, 'whsec_secret');
    const box = createSecretBox(current, [old]);
    expect(box.open(COLUMN, sealed)).toBe('whsec_secret');
    expect(box.seal(COLUMN, 'x').split(':')[2]).toBe(current.id);
    expect(box.currentKeyId()).toBe(current.id);
  });

  it('reads a value without the prefix as the plaintext of an older version', () => {
    expect(createSecretBox(newKey()).open(COLUMN, 'whsec_legacy')).toBe('whsec_legacy');
  });

  it('refuses an unknown format version rather than reading it as plaintext', () => {
    expect(() => createSecretBox(newKey()).open(COLUMN, 'enc:v9:abc:def:ghi')).toThrow(/unknown format/);
  });

  it('without a key, refuses to seal or open a sealed value with the message it was given', () => {
    const sealed = createSecretBox(newKey()).seal(COLUMN, 'whsec_secret');
    const box = createSecretBox(null, [], 'set --secret-key-file');
    expect(() => box.seal(COLUMN, 'x')).toThrow('set --secret-key-file');
    expect(() => box.open(COLUMN, sealed)).toThrow('set --secret-key-file');
  });

  it('takes only a 32-byte base64 key', () => {
    expect(parseSecretKey(generateSecretKeyText(), 'k').key).toHaveLength(32);
    expect(() => parseSecretKey(Buffer.alloc(16).toString('base64'), 'MAILVERDICT_SECRET_KEY')).toThrow(
      /MAILVERDICT_SECRET_KEY must hold a 32-byte key/,
    );
    expect(() => parseSecretKey('not a key!', 'k')).toThrow(SecretKeyError);
  });
});

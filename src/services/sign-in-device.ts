/**
 * Device cookies (OWASP's "Slow down online guessing attacks with device cookies"; issue 16): a
 * browser that has signed in as a person carries a token saying so, and that person's sign-ins
 * from it skip the per-address delay that failures from elsewhere build up (sessions.service.ts).
 * Without it, an attacker who pays the proof of work kept the owner's sign-ins waiting up to 3 s
 * each (docs/benchmarks.md, "Sign-in under attack", (c2): 3 of 30 over 1 s, the longest 8.1 s).
 *
 * The token is HMAC-SHA256 of the person's id and current password hash, under a key derived
 * from the store's secret key: every API process recognises it, nothing is stored, and a new
 * password (a change or a reset) forgets every browser. It proves only that this browser once
 * completed a sign-in as that person: it opens nothing, and a password sent with it is checked and
 * counted like any other.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { DAY } from '../clock.js';
import type { Executor } from '../store/executor.js';
import { storeSecrets } from '../store/backend.js';
import { findPersonById } from '../store/person.store.js';
import type { PersonRow } from '../store/schema/dashboard.schema.js';

/** How long a browser is remembered after its last complete sign-in. */
export const DEVICE_COOKIE_MAX_AGE_MS = 365 * DAY;

type Person = Pick<PersonRow, 'id' | 'password_hash'>;

function tokenFor(db: Executor, person: Person): string | null {
  if (person.password_hash === null) return null;
  return createHmac('sha256', storeSecrets(db).deriveKey('sign-in-device'))
    .update(`${person.id}\n${person.password_hash}`)
    .digest('base64url');
}

/** The device token a browser gets at the end of a sign-in as the person; null when they have no password. */
export async function deviceTokenOf(db: Executor, personId: string): Promise<string | null> {
  const person = await findPersonById(db, personId);
  return person === undefined ? null : tokenFor(db, person);
}

/** Whether `token` is the person's device token (for their current password), compared in constant time. */
export function isDeviceOf(db: Executor, person: Person, token: string | undefined): boolean {
  const expected = tokenFor(db, person);
  if (token === undefined || expected === null) return false;
  const given = Buffer.from(token);
  return given.length === Buffer.byteLength(expected) && timingSafeEqual(given, Buffer.from(expected));
}

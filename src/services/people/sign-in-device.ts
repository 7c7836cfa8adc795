/**
 * Device cookies (OWASP's "Slow down online guessing attacks with device cookies"; issue 16): a
 * browser that has signed in as a person carries a token saying so, and that person's sign-ins
 * from it skip the per-address delay that failures from elsewhere build up (sessions.service.ts).
 * Without it, an attacker who pays the proof of work kept the owner's sign-ins waiting up to 3 s
 * each (docs/benchmarks.md, "Sign-in under attack", (c2): 3 of 30 over 1 s, the longest 8.1 s).
 *
 * The token is `v2.<issued>.<nonce>.<mac>`: HMAC-SHA256 of the person's id, current password
 * hash, the time it was issued and 16 random bytes, under a key derived from the store's secret
 * key, so every API process recognises it and a new password (a change or a reset) forgets every
 * browser. It is good for `DEVICE_COOKIE_MAX_AGE_MS` after it was issued, and it changes at each
 * complete sign-in (issue 26): the token the browser presented is spent (marked in the store's
 * attempt counters until it would have expired, failure-budget.ts `spendOnce`) and a new one
 * is set, so a copy taken from the browser stops working at the person's next sign-in there,
 * not a year later. It proves only that this browser once completed a sign-in as that person: it
 * opens nothing, and a password sent with it is checked and counted like any other.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { DAY, type Clock } from '../../clock.js';
import type { Executor } from '../../store/executor.js';
import { storeSecrets } from '../../store/backend.js';
import { findPersonById } from '../../store/person.store.js';
import { countSignInFailures } from '../../store/session.store.js';
import type { PersonRow } from '../../store/schema/dashboard.schema.js';
import { failureKey, spendOnce } from './failure-budget.js';

/** How long a browser is remembered after its last complete sign-in. */
export const DEVICE_COOKIE_MAX_AGE_MS = 365 * DAY;

type Person = Pick<PersonRow, 'id' | 'password_hash'>;

interface Parsed {
  issuedSec: number;
  nonce: string;
  mac: string;
}

function macFor(db: Executor, person: Person, issuedSec: number, nonce: string): string | null {
  if (person.password_hash === null) return null;
  return createHmac('sha256', storeSecrets(db).deriveKey('sign-in-device'))
    .update(`${person.id}\n${person.password_hash}\n${issuedSec}\n${nonce}`)
    .digest('base64url');
}

function parse(token: string | undefined): Parsed | null {
  const match = /^v2\.(\d{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/.exec(token ?? '');
  return match === null ? null : { issuedSec: Number(match[1]), nonce: match[2]!, mac: match[3]! };
}

function expiryOf(parsed: Parsed): Date {
  return new Date(parsed.issuedSec * 1000 + DEVICE_COOKIE_MAX_AGE_MS);
}

const spentKey = (parsed: Parsed): string => failureKey(`sign-in-device-spent:${parsed.mac}`);

/** The parsed token when it is the person's (their current password), unexpired and not spent. */
async function validToken(
  db: Executor,
  clock: Clock,
  person: Person,
  token: string | undefined,
): Promise<Parsed | null> {
  const parsed = parse(token);
  if (parsed === null) return null;
  const expected = macFor(db, person, parsed.issuedSec, parsed.nonce);
  if (expected === null || !timingSafeEqual(Buffer.from(parsed.mac), Buffer.from(expected))) return null;
  const expires = expiryOf(parsed);
  if (clock.now() >= expires) return null;
  if ((await countSignInFailures(db, spentKey(parsed), expires.toISOString())) > 0) return null;
  return parsed;
}

/** Whether `token` is a live device token of the person (for their current password). */
export async function isDeviceOf(
  db: Executor,
  clock: Clock,
  person: Person,
  token: string | undefined,
): Promise<boolean> {
  return (await validToken(db, clock, person, token)) !== null;
}

/**
 * The device token a browser gets at the end of a sign-in as the person: a new one each time,
 * and the one it presented (when it was the person's) is spent. Null when they have no password.
 */
export async function rotateDeviceToken(
  db: Executor,
  clock: Clock,
  personId: string,
  presented: string | undefined,
): Promise<string | null> {
  const person = await findPersonById(db, personId);
  if (person === undefined) return null;
  const old = await validToken(db, clock, person, presented);
  if (old !== null) await spendOnce(db, spentKey(old), expiryOf(old));
  const issuedSec = Math.floor(clock.now().getTime() / 1000);
  const nonce = randomBytes(16).toString('base64url');
  const mac = macFor(db, person, issuedSec, nonce);
  return mac === null ? null : `v2.${issuedSec}.${nonce}.${mac}`;
}

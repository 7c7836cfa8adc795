/**
 * Dashboard passwords, hashed with scrypt from node:crypto: memory-hard (each guess costs
 * 128·N·r bytes of memory as well as time, which is what makes GPU and ASIC guessing expensive),
 * in Node itself, so no native package has to build or ship a binary (argon2 would need one).
 * It runs on libuv's thread pool, off the event loop.
 *
 * Parameters: N = 2^15 by default (the `passwordHashCost` setting), r = 8, p = 1 (32 MiB and,
 * measured on this 2-core machine under load, 100-220 ms per hash; N = 2^17, OWASP's figure,
 * took 730 ms and 128 MiB per sign-in). They are
 * stored with each hash (`scrypt$N$r$p$salt$hash`), so they can be raised later: a hash made
 * with weaker ones still verifies and `needsRehash` says to replace it at the next sign-in.
 * Every password has its own 16-byte random salt; hashes are compared in constant time.
 *
 * Every hash goes through one bounded queue (issue 16; p-queue with a priority per lane,
 * `HashLane`): at most `HASH_CONCURRENCY` run at once and `HASH_QUEUE_LIMIT` wait in each lane;
 * past that the caller gets 503 `service_unavailable` with Retry-After instead of a queue that
 * grows. Forty concurrent sign-ins with wrong passwords
 * otherwise made one elsewhere take 1.4 s instead of 70 ms. The queue is process-wide on purpose:
 * what it guards, libuv's thread pool and the memory of the hashes, is the process's.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import PQueue from 'p-queue';
import { PASSWORD_HASH_COST } from '../../config.js';
import { AppError } from '../../errors.js';

interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

const costParams = (log2N: number): ScryptParams => ({ N: 2 ** log2N, r: 8, p: 1 });
let current: ScryptParams = costParams(PASSWORD_HASH_COST.default);
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Highest N a stored hash may ask for: a tampered row must not make us allocate gigabytes. */
const MAX_N = 2 ** PASSWORD_HASH_COST.max;

/**
 * The cost of the hashes this process makes from now on (the `passwordHashCost` setting, set by
 * `serve` at start-up). Process-wide like the queue below, and for the same reason: what it
 * spends, the thread pool's time and memory, is the process's. Test suites set 2^10 (about 1 ms
 * instead of 100-220 ms per hash: the dashboard's route tests ran three times as fast).
 */
export function setPasswordHashCost(log2N: number): void {
  if (!Number.isInteger(log2N) || log2N < PASSWORD_HASH_COST.min || log2N > PASSWORD_HASH_COST.max)
    throw new RangeError(
      `password hash cost must be an integer from ${PASSWORD_HASH_COST.min} to ${PASSWORD_HASH_COST.max}`,
    );
  current = costParams(log2N);
  dummy = undefined;
}

/** Hashes computed at once: the machine's two cores (each takes 32 MiB and 100-220 ms). */
export const HASH_CONCURRENCY = 2;
/** Hashes that may wait for one of those: about a second of work at most. */
export const HASH_QUEUE_LIMIT = 8;

/**
 * Which queue a hash waits in: `first` for a sign-in from a browser that has signed in as the
 * person before (its device cookie, sign-in-device.ts), served before `others`, so that guesses
 * from elsewhere that fill the queue neither delay nor refuse the person's own sign-in (issue 16;
 * docs/benchmarks.md, "Sign-in under attack"). Each queue holds `HASH_QUEUE_LIMIT` at most.
 */
export type HashLane = 'first' | 'others';

/** Priority per lane: p-queue runs the highest waiting first. */
const PRIORITY: Record<HashLane, number> = { first: 1, others: 0 };
const hashing = new PQueue({ concurrency: HASH_CONCURRENCY });

async function inTurn<T>(lane: HashLane, work: () => Promise<T>): Promise<T> {
  // Bounded per lane: what waits in `others` never refuses a `first` (sizeBy counts the waiting).
  if (hashing.pending >= HASH_CONCURRENCY && hashing.sizeBy({ priority: PRIORITY[lane] }) >= HASH_QUEUE_LIMIT)
    throw new AppError('service_unavailable', 'too many password checks at once; retry in a second', {
      retryAfterSeconds: 1,
    });
  return hashing.add(work, { priority: PRIORITY[lane] });
}

function derive(
  password: string,
  salt: Buffer,
  params: ScryptParams,
  lane: HashLane = 'others',
): Promise<Buffer> {
  return inTurn(lane, () => scryptKey(password, salt, params));
}

function scryptKey(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const options: ScryptOptions = {
    N: params.N,
    r: params.r,
    p: params.p,
    // scrypt needs 128·N·r bytes; Node refuses above maxmem (32 MiB by default, exactly our need).
    maxmem: 256 * params.N * params.r,
  };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** The stored form of a new password. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const params = current;
  const key = await derive(password, salt, params);
  const { N, r, p } = params;
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

interface ParsedHash {
  params: ScryptParams;
  salt: Buffer;
  key: Buffer;
}

function parseHash(stored: string): ParsedHash | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || N > MAX_N || r > 32 || p > 16) return null;
  return {
    params: { N, r, p },
    salt: Buffer.from(parts[4]!, 'base64'),
    key: Buffer.from(parts[5]!, 'base64'),
  };
}

/** Whether `password` is the one `stored` was made from; `lane`: see HashLane. */
export async function verifyPassword(
  password: string,
  stored: string,
  lane: HashLane = 'others',
): Promise<boolean> {
  const parsed = parseHash(stored);
  if (parsed === null || parsed.key.length !== KEY_BYTES) return false;
  const key = await derive(password, parsed.salt, parsed.params, lane);
  return timingSafeEqual(key, parsed.key);
}

/** Whether `stored` was made with weaker parameters than today's. */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  if (parsed === null) return true;
  const { N, r, p } = parsed.params;
  return N < current.N || r < current.r || p < current.p;
}

let dummy: Promise<string> | undefined;

/**
 * A hash no password matches, made once: signing in as an unknown address verifies against it,
 * so that the answer takes as long as for a known address with a wrong password.
 */
export function dummyHash(): Promise<string> {
  // A refusal of the queue is not kept: the next caller makes it again.
  dummy ??= hashPassword(randomBytes(32).toString('base64')).catch((err: unknown) => {
    dummy = undefined;
    throw err;
  });
  return dummy;
}

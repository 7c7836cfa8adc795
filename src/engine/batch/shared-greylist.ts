/**
 * The greylist retry schedule shared between engines (worker processes, through Redis): when a
 * server greylists an address, the time before which it must not be asked again and the tries
 * used so far are written to the shared cache, so that an engine that takes the address over (a
 * chunk taken over from a worker that died, the same address in another job) waits for that time
 * instead of knocking at once, and counts those tries against `greylistRetries`.
 *
 * Most domains never greylist, so the addresses are not looked up one by one: a domain that
 * greylisted any address carries a marker (`greylist-domains`), asked once per domain and call
 * alongside the catch-all answer; only a marked domain's addresses are looked up (`greylist`).
 * Times are the recording worker's epoch ms: worker clocks are taken to agree within far less
 * than a greylist delay (NTP).
 */
import type { EngineCoordination, SharedCache } from '../coordination.js';
import type { BackgroundTasks } from '../background.js';
import type { RecipientWork } from './work.js';

/** Where an address stands in its greylist schedule, as shared. */
export interface GreylistEntry {
  /** Epoch ms before which the address must not be asked again. */
  retryAt: number;
  /** Tries that ended greylisted so far (they count against `greylistRetries`). */
  tries: number;
}

export interface SharedGreylistOptions {
  greylistDelayMs: number;
  greylistRetries: number;
}

export interface SharedGreylistDeps {
  /** Epoch ms. */
  now(): number;
  /** Where the writes go (awaited when the engine closes). */
  background: BackgroundTasks;
  failed(error: unknown, operation: string): void;
}

/** Addresses of one marked domain looked up at once. */
const LOOKUP_CONCURRENCY = 16;

const NOTHING: ReadonlyMap<string, GreylistEntry> = new Map();

export class SharedGreylistSchedule {
  readonly #entries: SharedCache<GreylistEntry>;
  readonly #domains: SharedCache<true>;
  readonly #options: SharedGreylistOptions;
  readonly #deps: SharedGreylistDeps;

  constructor(coordination: EngineCoordination, options: SharedGreylistOptions, deps: SharedGreylistDeps) {
    this.#entries = coordination.cache<GreylistEntry>('greylist');
    this.#domains = coordination.cache<true>('greylist-domains');
    this.#options = options;
    this.#deps = deps;
  }

  /**
   * The shared schedule, by address, of those of `addresses` (all of `domain`) that have one. Never
   * rejects: a shared cache that fails is a miss.
   */
  async lookup(
    domain: string,
    addresses: readonly { address: string }[],
  ): Promise<ReadonlyMap<string, GreylistEntry>> {
    try {
      if ((await this.#domains.get(domain)) !== true) return NOTHING;
    } catch (error) {
      this.#deps.failed(error, 'cache');
      return NOTHING;
    }
    const found = new Map<string, GreylistEntry>();
    let next = 0;
    let failing = false;
    const worker = async (): Promise<void> => {
      while (next < addresses.length && !failing) {
        const { address } = addresses[next++]!;
        try {
          const entry = await this.#entries.get(address);
          if (isEntry(entry)) found.set(address, entry);
        } catch (error) {
          failing = true;
          this.#deps.failed(error, 'cache');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(LOOKUP_CONCURRENCY, addresses.length) }, worker));
    return found;
  }

  /**
   * `work` was greylisted for the `tries`-th time and must not be asked again before `retryAt`.
   * The entry outlives `retryAt` by a whole schedule, so that the tries keep counting.
   */
  record(work: RecipientWork, retryAt: number, tries: number): void {
    const { greylistDelayMs, greylistRetries } = this.#options;
    const ttlMs = Math.max(0, retryAt - this.#deps.now()) + greylistDelayMs * (greylistRetries + 1);
    const { background } = this.#deps;
    background.track('cache', this.#domains.set(work.domain, true, ttlMs));
    background.track('cache', this.#entries.set(work.address, { retryAt, tries }, ttlMs));
  }

  /** `work`, once greylisted, got an answer: its schedule ends. */
  answered(work: RecipientWork): void {
    if (work.greylistTries > 0) this.#deps.background.track('cache', this.#entries.delete(work.address));
  }
}

function isEntry(value: unknown): value is GreylistEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Partial<GreylistEntry>;
  return typeof entry.retryAt === 'number' && typeof entry.tries === 'number';
}

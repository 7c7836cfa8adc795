/**
 * The work waiting for one MX host: ready items (FIFO, with a front for retries) and delayed
 * items (greylisted recipients waiting for their next try). Sessions to the host take batches
 * from here; items of aborted runs are dropped as they come up.
 */
import type { Egress } from '../egress/egress.js';
import type { Work } from './work.js';

/**
 * A host's queue as reached through one egress: the unit of politeness (session cap, back-off,
 * failure streak, rest after a policy refusal), keyed by `pairKey(egress, host)`.
 */
export interface Lane {
  readonly queue: HostQueue;
  readonly egress: Egress;
  readonly key: string;
  /**
   * Sessions the host allows from this egress at once, when it said so ("421 too many
   * connections from your address" while others were open) and that is below the per-host cap;
   * Infinity until then. Kept as long as the queue.
   */
  sessionCap: number;
  /**
   * The lane's group in the host limiter: the mail provider of the host through this egress
   * (`pairKey(egress, 'provider:<name>')`), whose cap and pace hold across all of its hosts; null
   * or absent for a host the provider table does not know.
   */
  readonly group?: string | null;
}

export class HostQueue {
  /** The IP address sessions connect to. */
  readonly key: string;
  /** The MX host name (TLS server name, evidence). */
  readonly exchange: string;
  /** The egresses that reach this host, as lanes; set by the scheduler when it creates the queue. */
  lanes: readonly Lane[] = [];
  /**
   * RCPTs per transaction the host took before it answered "452 too many recipients" (RFC 5321
   * §4.5.3.1.10), learnt by one session and kept by the next ones; Infinity until then. Without
   * it every new session paid one refused RCPT (a reject of its budget) to learn it again.
   */
  transactionLimit = Infinity;
  /** Every address of the MX host (both families when it has them), for Happy Eyeballs. */
  hostAddresses: readonly string[] = [];
  /** The addresses of the family whose DNS answer is still to come (RFC 8305 §3); null once in. */
  lateAddresses: Promise<string[]> | null = null;
  /** The address that won the host's last Happy Eyeballs race: the next sessions try it first. */
  firstAddress: string | null = null;
  /** The queue's sessions open now that are counted at another address (the one that won their race). */
  movedSessions = 0;
  #ready: Work[] = [];
  #head = 0;
  readonly #delayed: { at: number; work: Work }[] = [];

  constructor(key: string, exchange: string) {
    this.key = key;
    this.exchange = exchange;
  }

  get readyCount(): number {
    return this.#ready.length - this.#head;
  }

  get delayedCount(): number {
    return this.#delayed.length;
  }

  get isEmpty(): boolean {
    return this.readyCount === 0 && this.#delayed.length === 0;
  }

  push(work: Work): void {
    this.#ready.push(work);
  }

  /** Puts `works` back at the front, in their order (retries go before new work). */
  pushFront(works: readonly Work[]): void {
    if (works.length === 0) return;
    this.#ready = [...works, ...this.#ready.slice(this.#head)];
    this.#head = 0;
  }

  /** Holds `work` until epoch ms `at`. */
  delay(work: Work, at: number): void {
    this.#delayed.push({ at, work });
  }

  /** Moves delayed items that are due to the ready list. */
  promote(now: number): void {
    if (this.#delayed.length === 0) return;
    for (let i = 0; i < this.#delayed.length;) {
      const entry = this.#delayed[i]!;
      if (entry.at <= now) {
        this.#ready.push(entry.work);
        this.#delayed.splice(i, 1);
      } else i++;
    }
  }

  /** Epoch ms of the earliest delayed item; Infinity when none. */
  nextDueAt(): number {
    let at = Infinity;
    for (const entry of this.#delayed) at = Math.min(at, entry.at);
    return at;
  }

  /** Up to `count` ready items, skipping (and dropping) those of aborted runs. */
  take(count: number): Work[] {
    const out: Work[] = [];
    while (out.length < count && this.#head < this.#ready.length) {
      const work = this.#ready[this.#head]!;
      this.#head += 1;
      if (work.kind === 'rcpt' && work.run.aborted) continue;
      out.push(work);
    }
    this.#compact();
    return out;
  }

  /** Removes every item for which `drop` is true (the items of an aborted run). */
  remove(drop: (work: Work) => boolean): void {
    this.#ready = this.#ready.slice(this.#head).filter((work) => !drop(work));
    this.#head = 0;
    const kept = this.#delayed.filter((entry) => !drop(entry.work));
    this.#delayed.length = 0;
    this.#delayed.push(...kept);
  }

  /** Every item, ready and delayed, removed from the queue. */
  drain(): Work[] {
    const out = [...this.#ready.slice(this.#head), ...this.#delayed.map((d) => d.work)];
    this.#ready = [];
    this.#head = 0;
    this.#delayed.length = 0;
    return out;
  }

  /** Only the ready items, removed. */
  drainReady(): Work[] {
    const out = this.#ready.slice(this.#head);
    this.#ready = [];
    this.#head = 0;
    return out;
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#ready.length) {
      this.#ready = this.#ready.slice(this.#head);
      this.#head = 0;
    }
  }
}

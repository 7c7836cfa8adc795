/**
 * One `verifyMany` call: parse and deduplicate, resolve each domain once, settle what DNS and
 * the offline lists already decide, queue the rest at their MX hosts, and build every result
 * with the single verifier's own code (`buildResult`), so that a batch row and a single
 * verification of the same address have the same shape and the same verdict table.
 */
import type { DnsOutcome, SmtpOutcome } from '../outcome.js';
import type { VerificationResult } from '../types.js';
import { decideVerdict } from '../verdict.js';
import { buildResult, disposableEvidence, invalidResult, listFlags } from '../verifier.js';
import type { CatchAllTracker } from './catch-all.js';
import { improbableLocalPart } from '../probe.js';
import type { UniqueAddress } from './group.js';
import { groupAddresses } from './group.js';
import type { ProbeScheduler } from './scheduler.js';
import type { GreylistEntry, SharedGreylistSchedule } from './shared-greylist.js';
import type { VerifyManyOptions } from './types.js';
import type { RecipientWork, RunLink } from './work.js';

export interface RunContext {
  /** A domain's mail hosts (MailHostResolver.resolve, or the shared negative answers first). Never rejects. */
  resolve(domain: string): Promise<DnsOutcome>;
  scheduler: ProbeScheduler;
  catchAll: CatchAllTracker;
  /** The greylist retry schedule shared with other engines; null when nothing is shared. */
  greylist: SharedGreylistSchedule | null;
  maxMxHosts: number;
  random: () => number;
}

/** Domains resolved at once: enough to keep sessions fed, few enough not to flood the resolver. */
const DNS_CONCURRENCY = 64;

const NO_SCHEDULE: ReadonlyMap<string, GreylistEntry> = new Map();

export class BatchRun implements RunLink {
  readonly #context: RunContext;
  readonly #emails: readonly string[];
  readonly #options: VerifyManyOptions;
  readonly #results: VerificationResult[];
  #unique: UniqueAddress[] = [];
  #remaining = 0;
  #aborted = false;
  #finished = false;
  readonly #startedAt = performance.now();
  #resolve: (results: VerificationResult[]) => void = () => undefined;
  #reject: (reason: unknown) => void = () => undefined;
  readonly #settled: boolean[] = [];
  /** Each probed domain's DNS answer, for its results' `mx` check. */
  readonly #dns = new Map<string, DnsOutcome>();
  readonly #onAbort = (): void => this.abort(this.#options.signal?.reason ?? new Error('aborted'));

  constructor(context: RunContext, emails: readonly string[], options: VerifyManyOptions) {
    this.#context = context;
    this.#emails = emails;
    this.#options = options;
    this.#results = new Array<VerificationResult>(emails.length);
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get label(): string | undefined {
    return this.#options.label;
  }

  /** Resolves with every result in input order; rejects with the abort reason when aborted. */
  run(): Promise<VerificationResult[]> {
    const done = new Promise<VerificationResult[]>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    const signal = this.#options.signal;
    if (signal?.aborted === true) {
      this.abort(signal.reason);
      return done;
    }
    signal?.addEventListener('abort', this.#onAbort, { once: true });

    const grouped = groupAddresses(this.#emails);
    for (const bad of grouped.malformed) {
      this.#emit(bad.index, invalidResult(bad.input, bad.error, this.#startedAt));
    }
    this.#unique = grouped.unique;
    this.#remaining = grouped.unique.length;
    if (this.#remaining === 0) this.#finish();
    // A failure here is a bug (the resolver never rejects); fail the call rather than hang it.
    else this.#resolveDomains([...grouped.byDomain]).catch((error: unknown) => this.abort(error));
    return done;
  }

  /** Stops: queued work is dropped, sessions finish their round trip, the run rejects with `reason`. */
  abort(reason: unknown): void {
    if (this.#finished) return;
    this.#aborted = true;
    this.#finished = true;
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
    this.#context.scheduler.remove((work) => work.kind === 'rcpt' && work.run === this);
    this.#reject(reason);
  }

  settle(work: RecipientWork, outcome: SmtpOutcome): void {
    const unique = this.#unique[work.id]!;
    this.#settleUnique(unique, this.#dns.get(unique.domain)!, outcome);
  }

  async #resolveDomains(domains: [string, UniqueAddress[]][]): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < domains.length && !this.#aborted) {
        const [domain, addresses] = domains[next++]!;
        const { catchAll, greylist } = this.#context;
        const dns = await this.#context.resolve(domain);
        let greylisted = NO_SCHEDULE;
        if (dns.kind === 'ok') {
          // Another worker may have answered the domain's catch-all question already, or be
          // waiting to ask again an address that the domain's server greylisted.
          const schedule =
            greylist !== null && dns.hosts.length > 0 ? greylist.lookup(domain, addresses) : NO_SCHEDULE;
          const loaded = catchAll.shared ? catchAll.load(domain) : undefined;
          [greylisted] = await Promise.all([schedule, loaded]);
        }
        if (!this.#aborted) this.#route(domain, addresses, dns, greylisted);
      }
    };
    await Promise.all(Array.from({ length: Math.min(DNS_CONCURRENCY, domains.length) }, worker));
  }

  /** Settles what DNS and the lists decide; queues the rest for SMTP. */
  #route(
    domain: string,
    addresses: UniqueAddress[],
    dns: DnsOutcome,
    greylisted: ReadonlyMap<string, GreylistEntry>,
  ): void {
    // Disposable domains (by their name or their MX hosts) are resolved but never probed, as in
    // the single verifier.
    if (dns.kind !== 'ok' || dns.hosts.length === 0 || disposableEvidence(domain, dns) !== null) {
      for (const unique of addresses) this.#settleUnique(unique, dns, null);
      return;
    }
    this.#dns.set(domain, dns);
    const hosts = dns.hosts.slice(0, this.#context.maxMxHosts);
    const { scheduler, catchAll } = this.#context;
    if (catchAll.cached(domain) === undefined && !catchAll.isProbing(domain)) {
      catchAll.begin(domain);
      scheduler.enqueue({
        kind: 'catch-all',
        address: `${improbableLocalPart(this.#context.random)}@${domain}`,
        domain,
        hosts,
        hostIndex: 0,
        addressIndex: 0,
        drops: 0,
      });
    }
    for (const unique of addresses) {
      const schedule = greylisted.get(unique.address);
      const work: RecipientWork = {
        kind: 'rcpt',
        run: this,
        id: unique.id,
        address: unique.address,
        domain,
        hosts,
        hostIndex: 0,
        addressIndex: 0,
        drops: 0,
        greylistTries: schedule?.tries ?? 0,
      };
      scheduler.enqueue(work, false, schedule?.retryAt ?? 0);
    }
  }

  #settleUnique(unique: UniqueAddress, dns: DnsOutcome, smtp: SmtpOutcome | null): void {
    if (this.#finished || this.#settled[unique.id] === true) return;
    this.#settled[unique.id] = true;
    const flags = listFlags(unique.local, unique.domain, dns);
    const verdict = decideVerdict({ ...flags, dns, smtp });
    const result = buildResult(unique, flags, dns, smtp, verdict, this.#startedAt);
    for (const index of unique.indexes) this.#emit(index, result);
    this.#remaining -= 1;
    if (this.#remaining === 0) this.#finish();
  }

  #emit(index: number, result: VerificationResult): void {
    this.#results[index] = result;
    if (this.#options.onResult === undefined || this.#aborted) return;
    try {
      this.#options.onResult(index, result);
    } catch (error) {
      // The caller's callback failed: end the call with its error rather than lose track of it.
      this.abort(error);
    }
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
    this.#resolve(this.#results);
  }
}

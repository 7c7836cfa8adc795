/**
 * Happy Eyeballs (RFC 8305) for a mail host with addresses of both families: the addresses are
 * interleaved by family (IPv6 first, §4), the first connection attempt starts at once, each next
 * one a Connection Attempt Delay (250 ms, §5) later, or at once when every earlier one failed;
 * the first socket to connect wins and the others are destroyed. A family whose connect never
 * completes (a firewall that drops SYNs, a broken IPv6 route) then costs 250 ms, not the
 * greeting's whole share of the verification's budget.
 *
 * Written here rather than with `net.connect({ autoSelectFamily })`: Node's race takes one host
 * *name*, resolves it with the system resolver and connects every attempt from one
 * `localAddress`. The engine connects to addresses it resolved itself (its own DNS servers, with
 * internal addresses already dropped: ../dns/resolver.ts), from the source address of the egress
 * that reaches each family (egress.ts), so each attempt carries its own address and local
 * address. DNS for A and AAAA already starts together as soon as the MX answer arrives
 * (MailHostResolver asks both for every MX host at once).
 */
import net from 'node:net';

/** RFC 8305 §5's recommended Connection Attempt Delay. */
export const DEFAULT_CONNECTION_ATTEMPT_DELAY_MS = 250;

/** One address to try, and the source address to connect from (null: the system's). */
export interface ConnectCandidate {
  address: string;
  localAddress: string | null;
}

export interface RaceOptions {
  port: number;
  /** Between the starts of two attempts while the earlier one is still pending. */
  attemptDelayMs: number;
  /** A `performance.now()` instant: no connection by then fails the race with `timeout`. */
  deadlineAt: number;
  signal?: AbortSignal;
  /**
   * Addresses of a family whose DNS answer had not arrived when the race started (RFC 8305 §3):
   * added to the race when they come; until then the race does not fail for want of candidates.
   */
  more?: Promise<readonly ConnectCandidate[]>;
  /** Called when addresses of `more` joined the race still running (not when it was over). */
  onJoin?: (added: readonly ConnectCandidate[]) => void;
}

export interface RaceWinner {
  socket: net.Socket;
  candidate: ConnectCandidate;
}

/** Why no attempt connected: the deadline, an abort, or every attempt failed (`cause`: the first one's error). */
export class RaceFailure extends Error {
  readonly kind: 'timeout' | 'aborted' | 'failed';
  declare readonly cause?: NodeJS.ErrnoException;

  constructor(kind: RaceFailure['kind'], cause?: NodeJS.ErrnoException) {
    super(cause?.message ?? kind, cause === undefined ? undefined : { cause });
    this.name = 'RaceFailure';
    this.kind = kind;
  }
}

/** Whether `addresses` has addresses of both families (Happy Eyeballs only races then). */
export function hasBothFamilies(addresses: readonly string[]): boolean {
  return addresses.some((a) => net.isIPv6(a)) && addresses.some((a) => net.isIPv4(a));
}

/** The addresses alternating by family, the preferred family first (RFC 8305 §4, First Address Family Count 1). */
export function interleaveFamilies(addresses: readonly string[], preferIpv6 = true): string[] {
  const v6 = addresses.filter((a) => net.isIPv6(a));
  const v4 = addresses.filter((a) => !net.isIPv6(a));
  const [first, second] = preferIpv6 ? [v6, v4] : [v4, v6];
  const out: string[] = [];
  for (let i = 0; i < Math.max(first.length, second.length); i++) {
    if (i < first.length) out.push(first[i]!);
    if (i < second.length) out.push(second[i]!);
  }
  return out;
}

/**
 * Connects to the first of `candidates` that accepts, starting them in order as RFC 8305 §5 says.
 * Resolves with the connected socket (the others are destroyed before they could reach a server's
 * greeting); rejects with a `RaceFailure`.
 */
export function connectFirst(
  candidates: readonly ConnectCandidate[],
  options: RaceOptions,
): Promise<RaceWinner> {
  return new Promise<RaceWinner>((resolve, reject) => {
    const list = [...candidates];
    let awaitingMore = options.more !== undefined;
    const pending = new Set<net.Socket>();
    let next = 0;
    let settled = false;
    let firstError: NodeJS.ErrnoException | null = null;
    let stagger: NodeJS.Timeout | null = null;
    let lastStartAt = -Infinity;
    const deadline = setTimeout(
      () => finish(null, new RaceFailure('timeout')),
      Math.max(0, options.deadlineAt - performance.now()),
    );
    const onAbort = (): void => finish(null, new RaceFailure('aborted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });

    function finish(winner: RaceWinner | null, failure: RaceFailure | null): void {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (stagger !== null) clearTimeout(stagger);
      options.signal?.removeEventListener('abort', onAbort);
      for (const socket of pending) if (socket !== winner?.socket) socket.destroy();
      pending.clear();
      if (winner !== null) resolve(winner);
      else reject(failure!);
    }

    function start(): void {
      if (stagger !== null) clearTimeout(stagger);
      stagger = null;
      if (settled || next >= list.length) return;
      const candidate = list[next++]!;
      lastStartAt = performance.now();
      const socket = net.connect({
        host: candidate.address,
        port: options.port,
        noDelay: true,
        localAddress: candidate.localAddress ?? undefined,
      });
      pending.add(socket);
      const onError = (error: NodeJS.ErrnoException): void => {
        pending.delete(socket);
        socket.destroy();
        firstError ??= error;
        if (settled) return;
        // The next attempt need not wait for the delay once the pending ones have all failed.
        if (next < list.length) {
          if (pending.size === 0) start();
        } else if (pending.size === 0 && !awaitingMore) {
          finish(null, new RaceFailure('failed', firstError));
        }
      };
      socket.once('error', onError);
      socket.once('connect', () => {
        pending.delete(socket);
        socket.off('error', onError);
        finish({ socket, candidate }, null);
      });
      if (next < list.length) stagger = setTimeout(start, options.attemptDelayMs);
    }

    // Late addresses join the race: at once when nothing is pending, else a Connection Attempt
    // Delay after the attempt in flight (unless a next start is already due).
    void options.more?.then(
      (added) => joined(added),
      () => joined([]),
    );
    function joined(added: readonly ConnectCandidate[]): void {
      awaitingMore = false;
      if (settled) return;
      list.push(...added);
      if (added.length > 0) options.onJoin?.(added);
      if (pending.size === 0) {
        if (next < list.length) start();
        else if (firstError !== null || candidates.length === 0)
          finish(null, new RaceFailure('failed', firstError ?? undefined));
      } else if (stagger === null && next < list.length) {
        stagger = setTimeout(start, Math.max(0, lastStartAt + options.attemptDelayMs - performance.now()));
      }
    }

    if (options.signal?.aborted === true) finish(null, new RaceFailure('aborted'));
    else start();
  });
}

/**
 * Which mail hosts hold their first reply after a TLS 1.3 handshake until their session tickets
 * are acknowledged (docs/prober.md#starttls).
 *
 * An OpenSSL 3 server sends its TLS 1.3 session tickets when it reads the client's Finished,
 * whatever the client asks (`SSL_OP_NO_TICKET` on either side only makes them stateful); nothing
 * a client sends turns them off. A server whose socket keeps Nagle's algorithm on (Postfix) then
 * holds its reply to the EHLO that came with the Finished until the tickets are acknowledged,
 * and a client kernel that delays that acknowledgement (Linux, 40 ms at least, without a
 * `quickack` route) adds it to the step: the EHLO after TLS took 3.1 round trips instead of 2.
 *
 * A host seen doing that is remembered for a while; with it, the prober sends the EHLO only once
 * the first ticket has come, so that the EHLO itself acknowledges the tickets and the reply
 * leaves at once: 2 round trips. A host not remembered gets the EHLO with the Finished, as before:
 * a server that replies at once (Nagle off, or no tickets) never waits. An entry is not renewed
 * while the prober waits (a wait hides whether the server still holds), so the host is seen
 * afresh after `ttlMs`; a remembered host that sent no ticket within the bound is forgotten.
 */
import { TtlMap } from '../ttl-map.js';

/** How long a host is remembered as holding (it is observed again after that). */
export const HELD_REPLY_TTL_MS = 60 * 60_000;
const MAX_HOSTS = 10_000;

/**
 * How much later than the first ticket the reply must come to count as held: half the round
 * trip (a held reply waits for the tickets' acknowledgement, a whole round trip) plus this margin,
 * less than the shortest delayed acknowledgement (Linux: 40 ms) that the wait saves. The default
 * of `smtp.heldReplyMarginMs`; it also bounds the wait for the first ticket (connection.ts).
 */
export const DEFAULT_HELD_REPLY_MARGIN_MS = 20;

/** What one TLS session showed about its host (SmtpConnection.ticketsAfterTls). */
export type TicketObservation =
  /** The reply came well after the first ticket: the server held it. */
  | 'held'
  /** The reply came with the tickets, or no ticket came before it: nothing held it. */
  | 'not_held'
  /** The prober waited and no ticket came within the bound: the host sends none (any more). */
  | 'no_tickets'
  /** The prober waited and the tickets came: nothing new (a wait hides whether it still holds). */
  | 'waited';

export class HeldReplies {
  readonly #hosts: TtlMap<string, true>;
  readonly #ttlMs: number;

  /** `now`: epoch ms (the prober's clock). */
  constructor(now: () => number, ttlMs = HELD_REPLY_TTL_MS) {
    this.#hosts = new TtlMap(MAX_HOSTS, now);
    this.#ttlMs = ttlMs;
  }

  /** Whether the EHLO after TLS should wait for the first session ticket of this host address. */
  holds(address: string): boolean {
    return this.#hosts.get(address) === true;
  }

  learn(address: string, observed: TicketObservation): void {
    if (observed === 'held') this.#hosts.set(address, true, this.#ttlMs);
    else if (observed !== 'waited') this.#hosts.delete(address);
  }
}

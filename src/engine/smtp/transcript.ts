/**
 * The SMTP conversation of one verification, on request (`VerifyOptions.transcript`): every
 * command line written and every reply line read, across every mail host tried, with markers in
 * square brackets for what is not a line of SMTP (a connection made or failed, a host not asked,
 * the TLS handshake). docs/api.md, "The SMTP conversation", describes the lines.
 *
 * The recorder belongs to the verification, not to a socket: a connection holds a replaceable
 * reference to it (`SmtpConnection.recorder`), set when the verification takes the connection and
 * cleared when it lets go of it, and a sealed recorder ignores whatever comes later. A session
 * reused by the next verification therefore never shows it this one's lines, nor this one that
 * one's.
 */
import type { TranscriptDirection, TranscriptLine } from '../types.js';

/** What a connection reports of its traffic (connection.ts calls it on its write and read paths). */
export interface WireRecorder {
  record(dir: TranscriptDirection, text: string): void;
}

/** Lines kept at most: a conversation is a few dozen; the bound only stops a babbling server. */
export const MAX_TRANSCRIPT_LINES = 500;
const CONTROL = /[\r\n\0]/g;

/** Collects one verification's lines, `at_ms` counted from the recorder's creation. */
export class TranscriptRecorder implements WireRecorder {
  readonly #now: () => number;
  readonly #startedAt: number;
  readonly #lines: TranscriptLine[] = [];
  #sealed = false;

  /** `now`: a monotonic clock in milliseconds (performance.now by default; injectable for tests). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
    this.#startedAt = now();
  }

  record(dir: TranscriptDirection, text: string): void {
    if (this.#sealed || this.#lines.length >= MAX_TRANSCRIPT_LINES) return;
    // Nothing with CR or LF reaches the wire (connection.ts refuses it); a reply line arrives without
    // its line ending. Replaced anyway, so that a line of the transcript is always one line.
    this.#lines.push({
      dir,
      text: text.replace(CONTROL, ' '),
      at_ms: Math.round(this.#now() - this.#startedAt),
    });
  }

  /** Stops recording (the verification is over) and returns the lines. */
  seal(): TranscriptLine[] {
    this.#sealed = true;
    return this.#lines.slice();
  }
}

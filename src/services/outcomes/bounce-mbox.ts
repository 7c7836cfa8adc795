/**
 * An mbox file of bounces (the dashboard's upload, docs/outcomes.md) to outcome events: split into
 * messages, each read as POST /v1/outcomes reads one (bounce-message.ts). Bounded in bytes,
 * messages and events; the event loop gets a turn every 20 messages.
 */
import { AppError } from '../../errors.js';
import { eventsFromMessage, type IgnoredRecipient, type MessageEvent } from './bounce-message.js';
import { MAX_EVENTS_PER_REQUEST } from './intake.service.js';

/** An mbox file's bounds: its size and the messages in it. */
export const MAX_MBOX_BYTES = 64 * 1024 * 1024;
export const MAX_MBOX_MESSAGES = 5_000;

/** What an mbox file held: the events of its bounces and complaints, and the messages that were neither. */
export interface MboxEvents {
  messages: number;
  events: MessageEvent[];
  /** The message (from 0) each of `events` came from. */
  eventMessages: number[];
  ignored: (IgnoredRecipient & { message_index: number })[];
  /** Messages that gave nothing: not a bounce, malformed or too large. */
  rejected: {
    message_index: number;
    error: 'not_a_bounce' | 'malformed_message' | 'payload_too_large';
    message: string;
  }[];
}

/**
 * Splits an mbox file (the "From " line before each message; mboxrd's `>From ` unquoted) and reads
 * each message as eventsFromMessage does. A message that is not a bounce is listed in `rejected`,
 * not thrown. Throws AppError `payload_too_large` past MAX_MBOX_BYTES and `invalid_request` past
 * MAX_MBOX_MESSAGES messages or 10,000 events (one intake's worth).
 */
export async function eventsFromMbox(
  raw: Uint8Array,
  maxEvents = MAX_EVENTS_PER_REQUEST,
): Promise<MboxEvents> {
  if (raw.byteLength > MAX_MBOX_BYTES)
    throw new AppError('payload_too_large', `the mbox is larger than ${MAX_MBOX_BYTES / 1024 / 1024} MiB`);
  const messages = splitMbox(raw);
  if (messages.length > MAX_MBOX_MESSAGES)
    throw new AppError('invalid_request', `the mbox holds more than ${MAX_MBOX_MESSAGES} messages; split it`);
  const out: MboxEvents = {
    messages: messages.length,
    events: [],
    eventMessages: [],
    ignored: [],
    rejected: [],
  };
  for (const [index, message] of messages.entries()) {
    // Parsing is CPU work in microtasks: give the event loop its turn now and then (a 64 MiB file).
    if (index % 20 === 19) await new Promise((resolve) => setImmediate(resolve));
    try {
      const found = await eventsFromMessage(message);
      out.events.push(...found.events);
      out.eventMessages.push(...found.events.map(() => index));
      out.ignored.push(...found.ignored.map((i) => ({ ...i, message_index: index })));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const code = err.code;
      if (code !== 'not_a_bounce' && code !== 'malformed_message' && code !== 'payload_too_large') throw err;
      out.rejected.push({ message_index: index, error: code, message: err.message });
    }
    if (out.events.length > maxEvents)
      throw new AppError('invalid_request', `the mbox yields more than ${maxEvents} events; split it`);
  }
  return out;
}

// A "From " line starts a message only at the start of the file or after a blank line.
const FROM_LINE = /(?:^|\n\r?\n)From [^\n]*\n/g;

/** The messages of an mbox (LF or CRLF), each without its "From " line, `>From ` lines unquoted (mboxrd). */
export function splitMbox(raw: Uint8Array): Uint8Array[] {
  // latin1 keeps one character per byte, so offsets in the text are offsets in the bytes.
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1');
  const starts: { from: number; body: number }[] = [];
  for (const match of text.matchAll(FROM_LINE)) {
    const at = match.index + (match[0].startsWith('\n') ? 1 : 0);
    starts.push({ from: at, body: match.index + match[0].length });
  }
  // A file of one message without its envelope line (an .eml) is that message.
  if (starts.length === 0) return text.trim() === '' ? [] : [raw];
  return starts.map(({ body }, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]!.from : text.length;
    const message = text.slice(body, end).replace(/^>(>*From )/gm, '$1');
    return Buffer.from(message, 'latin1');
  });
}

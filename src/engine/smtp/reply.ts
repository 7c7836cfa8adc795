/**
 * SMTP replies (RFC 5321 §4.2): an incremental parser fed with whatever the socket delivers,
 * the RFC 3463 enhanced status code when the server sends one, and the EHLO keywords.
 *
 * The parser is on every probe's hot path: it scans with indexOf and charCodeAt, allocates one
 * string per line, and runs one small regular expression per reply (the enhanced code).
 */

/** One complete reply: a three-digit code and its text lines (code and separator removed). */
export interface SmtpReply {
  code: number;
  /** RFC 3463 `class.subject.detail` taken from the first line, e.g. "5.1.1"; null when absent. */
  enhancedCode: string | null;
  /** Text of every line without code, separator and enhanced code. */
  lines: string[];
  /** The lines joined with a space: what `checks.smtp.message` shows. */
  message: string;
}

/** The server spoke something that is not SMTP: a malformed, overlong or endless reply. */
export class SmtpProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SmtpProtocolError';
  }
}

/** RFC 5321 §4.5.3.1.5 allows 512 octets per reply line; real servers exceed it, 4 KiB does not. */
export const MAX_REPLY_LINE = 4096;
/** An EHLO reply lists a dozen or so keywords; a hundred lines means a hostile or broken peer. */
export const MAX_REPLY_LINES = 100;

// Class 2, 4 or 5; subject and detail of 1-3 digits (RFC 3463 §2).
const ENHANCED = /^([245])\.(\d{1,3})\.(\d{1,3})(?: |$)/;

const DIGIT_0 = 48;
const DIGIT_9 = 57;
const HYPHEN = 45;
const SPACE = 32;
const CR = 13;

/**
 * Incremental reply parser. `push` takes decoded text as it arrives (a line or a CRLF may be
 * split across chunks; bare LF is accepted) and returns the replies it completed.
 */
export class ReplyParser {
  #pending = '';
  #code = 0;
  #lines: string[] = [];
  /** Sees every complete line as received, before it is parsed (the transcript's read path). */
  onLine: ((line: string) => void) | null = null;

  /** Parses `chunk`; throws SmtpProtocolError on a malformed, overlong or endless reply. */
  push(chunk: string): SmtpReply[] {
    const text = this.#pending === '' ? chunk : this.#pending + chunk;
    const replies: SmtpReply[] = [];
    let start = 0;
    let newline = text.indexOf('\n', start);
    while (newline !== -1) {
      let end = newline;
      if (end > start && text.charCodeAt(end - 1) === CR) end -= 1;
      if (end - start > MAX_REPLY_LINE)
        throw new SmtpProtocolError(`reply line longer than ${MAX_REPLY_LINE} characters`);
      if (this.onLine !== null) this.onLine(text.slice(start, end));
      const reply = this.#line(text, start, end);
      if (reply !== null) replies.push(reply);
      start = newline + 1;
      newline = text.indexOf('\n', start);
    }
    this.#pending = start === text.length ? '' : text.slice(start);
    if (this.#pending.length > MAX_REPLY_LINE) {
      throw new SmtpProtocolError(`reply line longer than ${MAX_REPLY_LINE} characters`);
    }
    return replies;
  }

  /** Forgets any partial input: after STARTTLS nothing sent in clear text may be trusted. */
  reset(): void {
    this.#pending = '';
    this.#code = 0;
    this.#lines = [];
  }

  #line(text: string, start: number, end: number): SmtpReply | null {
    if (end - start < 3) throw new SmtpProtocolError(`malformed reply line "${text.slice(start, end)}"`);
    const d0 = text.charCodeAt(start);
    const d1 = text.charCodeAt(start + 1);
    const d2 = text.charCodeAt(start + 2);
    if (!isDigit(d0) || !isDigit(d1) || !isDigit(d2) || d0 < DIGIT_0 + 2) {
      throw new SmtpProtocolError(`malformed reply line "${clip(text.slice(start, end))}"`);
    }
    const code = (d0 - DIGIT_0) * 100 + (d1 - DIGIT_0) * 10 + (d2 - DIGIT_0);
    // RFC 5321 §4.2.1: "250" alone, "250 text" (last line) or "250-text" (more to come).
    const separator = end - start > 3 ? text.charCodeAt(start + 3) : SPACE;
    if (separator !== SPACE && separator !== HYPHEN) {
      throw new SmtpProtocolError(`malformed reply line "${clip(text.slice(start, end))}"`);
    }
    if (this.#lines.length > 0 && code !== this.#code) {
      throw new SmtpProtocolError(`reply code changed from ${this.#code} to ${code} inside one reply`);
    }
    if (this.#lines.length >= MAX_REPLY_LINES) {
      throw new SmtpProtocolError(`reply longer than ${MAX_REPLY_LINES} lines`);
    }
    this.#code = code;
    this.#lines.push(end - start > 4 ? text.slice(start + 4, end) : '');
    if (separator === HYPHEN) return null;
    const lines = this.#lines;
    this.#lines = [];
    return buildReply(code, lines);
  }
}

function buildReply(code: number, lines: string[]): SmtpReply {
  const first = lines[0] ?? '';
  const match = ENHANCED.exec(first);
  // RFC 3463 §2: the class of the enhanced code must match the class of the reply code.
  const enhancedCode =
    match !== null && Number(match[1]) === Math.floor(code / 100) ? match[0].trimEnd() : null;
  if (enhancedCode !== null) {
    // RFC 2034 §4 repeats the enhanced code on every line; drop it for a readable message.
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.startsWith(enhancedCode)) lines[i] = line.slice(enhancedCode.length).trimStart();
    }
  }
  const message = lines.length === 1 ? lines[0]! : lines.join(' ');
  return { code, enhancedCode, lines, message };
}

// An enhanced code written inside the text: qmail's "(#5.1.1)", its chkuser plugin's
// "(#5.1.1 - chkuser)", and the "(5.7.1)" of some Sendmail and Exim set-ups. It must follow "#" or
// "(" and must not run on into more digits, so that an IP address, a version number or Yahoo's
// "(554.30)" is never read as a code.
const WRITTEN_ENHANCED = /(?:#|\()([245])\.(\d{1,3})\.(\d{1,3})(?!\.?\d)/;

/**
 * The reply's RFC 3463 enhanced status code: the one at the head of its first line
 * (`reply.enhancedCode`), or else one written inside its text as qmail and some Sendmail and Exim
 * set-ups do (`550 sorry, no mailbox here by that name. (#5.1.1)`). Null when there is neither, or
 * when the written code's class is not the reply code's (RFC 3463 §2). Classification reads this;
 * `checks.smtp.enhanced_code` keeps showing only the code at the head, as the server sent it.
 */
export function enhancedCodeOf(reply: SmtpReply): string | null {
  if (reply.enhancedCode !== null) return reply.enhancedCode;
  const match = WRITTEN_ENHANCED.exec(reply.message);
  if (match === null || Number(match[1]) !== Math.floor(reply.code / 100)) return null;
  return `${match[1]}.${match[2]}.${match[3]}`;
}

function isDigit(c: number): boolean {
  return c >= DIGIT_0 && c <= DIGIT_9;
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 80)}...` : s;
}

/** What the server announced in its EHLO reply (RFC 5321 §4.1.1.1). */
export interface EhloExtensions {
  pipelining: boolean;
  starttls: boolean;
  /** SIZE limit in octets; 0 when announced without a limit; null when not announced. */
  size: number | null;
  eightBitMime: boolean;
  smtpUtf8: boolean;
  enhancedStatusCodes: boolean;
  /** Every keyword, upper-cased, with its parameters (possibly empty). */
  keywords: Map<string, string>;
}

/** Extensions of a server that answered HELO, or whose EHLO was refused. */
export const NO_EXTENSIONS: Readonly<EhloExtensions> = Object.freeze({
  pipelining: false,
  starttls: false,
  size: null,
  eightBitMime: false,
  smtpUtf8: false,
  enhancedStatusCodes: false,
  keywords: new Map<string, string>(),
});

/** Reads the keywords of a 250 EHLO reply; the first line is the server's greeting name. */
export function parseEhloExtensions(reply: SmtpReply): EhloExtensions {
  const keywords = new Map<string, string>();
  for (let i = 1; i < reply.lines.length; i++) {
    const line = reply.lines[i]!.trim();
    if (line === '') continue;
    const space = line.indexOf(' ');
    const keyword = (space === -1 ? line : line.slice(0, space)).toUpperCase();
    keywords.set(keyword, space === -1 ? '' : line.slice(space + 1).trim());
  }
  const size = keywords.get('SIZE');
  let sizeLimit: number | null = null;
  if (size !== undefined) {
    const n = Number(size);
    sizeLimit = size !== '' && Number.isSafeInteger(n) && n >= 0 ? n : 0;
  }
  return {
    pipelining: keywords.has('PIPELINING'),
    starttls: keywords.has('STARTTLS'),
    size: sizeLimit,
    eightBitMime: keywords.has('8BITMIME'),
    smtpUtf8: keywords.has('SMTPUTF8'),
    enhancedStatusCodes: keywords.has('ENHANCEDSTATUSCODES'),
    keywords,
  };
}

/**
 * The recipients of a bounce that has no `message/delivery-status` part: the text-only
 * notifications of qmail and Yahoo ("Sorry, we were unable to deliver your message to the
 * following address."), of older Exchange ("Delivery has failed to these recipients or groups",
 * "The following recipient(s) cannot be reached") and of Exim before its DSNs ("The following
 * address(es) failed"). They share one shape, which is what is read here:
 *
 *     <jane@example.com>:                         an address alone on its line (brackets, quotes,
 *     192.0.2.1 does not like recipient.          a trailing colon or " on <date>" allowed),
 *     Remote host said: 550 5.1.1 User unknown    then lines up to the next address or a blank
 *                                                 line, one of which holds the SMTP answer.
 *
 * A recipient counts only when its block holds an SMTP reply code (`550`, `#550 5.1.1`); an address
 * listed without one (Exchange lists each recipient twice, once with a friendly sentence only) is
 * merged with its block that has the code. The reading stops where the copy of the original
 * message begins, so addresses in it are never taken for recipients. The caller decides first
 * that the message is a bounce (from a mailer daemon, with one of the known opening sentences).
 */

export interface TextRecipient {
  email: string;
  /** The enhanced code of the SMTP answer, or `5.0.0` / `4.0.0` from its basic code. */
  status: string;
  /** The lines of the recipient's block, joined. */
  diagnostic: string;
}

/** The opening sentences of the text bounces read here. */
export const TEXT_BOUNCE_OPENINGS =
  /(wasn't able to deliver your message|unable to deliver (your|the) message|could not be delivered to one or more|delivery has failed to these recipients|did not reach some or all of the intended recipients|following address(es)? failed|following recipient\(s\) cannot be reached|permanent error; I've given up)/i;

/** Where the copy of the original message starts in a text bounce. */
export const COPY_STARTS =
  /^\s*(-{2,}.*(below this line|copy of the message|original message|message follows)|original message headers:|-+ ?the header of the original message)/im;

const ADDRESS_LINE = /^\s*['"<]?([^\s'"<>@]+@[^\s'"<>@]+?)['">]?\s*(:|\s+on\s+.*|\s*)$/;
const SMTP_REPLY = /(?:^|[\s#'(])([245])\d\d(?:[\s-]+#?([245]\.\d{1,3}\.\d{1,3}))?(?=[\s'"):]|$)/;

/** Text read at most (a notification's sentences are short; the rest is a copy of the message). */
export const MAX_TEXT_BYTES = 64 * 1024;

/** The recipients of a text bounce, each once; `exclude`: addresses that are not recipients (the sender). */
export function textBounceRecipients(text: string, exclude: readonly string[]): TextRecipient[] {
  const copy = COPY_STARTS.exec(text);
  const body = (copy === null ? text : text.slice(0, copy.index)).slice(0, MAX_TEXT_BYTES);
  const excluded = new Set(exclude.map((e) => e.toLowerCase()));
  const blocks: { email: string; lines: string[] }[] = [];
  let current: { email: string; lines: string[] } | null = null;
  for (const line of body.split(/\r?\n/)) {
    const address = ADDRESS_LINE.exec(line)?.[1];
    if (address !== undefined && !excluded.has(address.toLowerCase())) {
      current = { email: address, lines: [] };
      blocks.push(current);
    } else if (line.trim() === '') {
      // One blank line may sit between an address and its answer (Exchange); two end the block.
      if (current !== null && current.lines.length > 0) current = null;
    } else if (current !== null) current.lines.push(line.trim());
  }
  const found = new Map<string, TextRecipient>();
  for (const block of blocks) {
    const diagnostic = block.lines.join(' ');
    const reply = SMTP_REPLY.exec(diagnostic);
    const key = block.email.toLowerCase();
    if (reply === null || found.has(key)) continue;
    found.set(key, { email: block.email, status: reply[2] ?? `${reply[1]}.0.0`, diagnostic });
  }
  return [...found.values()];
}

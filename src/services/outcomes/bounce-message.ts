/**
 * Bounce and complaint messages to outcome events (docs/outcomes.md, "Bounce and complaint
 * messages"). The MIME structure is postal-mime's; what no MIME parser reads is this folder's:
 * the fields of a delivery-status or feedback-report part (dsn-fields.ts), the status table
 * (bounce-status.ts), the recipients of a text-only bounce (bounce-text.ts).
 *
 * An event rests on what the message says about a recipient: a `message/delivery-status` group
 * (RFC 3464), a text bounce's recipient block with its SMTP answer, an ARF report's
 * `Original-Rcpt-To` / `Removal-Recipient` or its original message's single `To`. A message that
 * is none of these is `not_a_bounce` and yields nothing. Pure: nothing is stored here.
 */
import PostalMime, { type Email } from 'postal-mime';
import { AppError } from '../../errors.js';
import { classifyBounce, type IgnoredReason } from './bounce-status.js';
import { COPY_STARTS, textBounceRecipients, TEXT_BOUNCE_OPENINGS } from './bounce-text.js';
import { addressOfField, diagnosticText, parseFieldGroups, type FieldGroup } from './dsn-fields.js';
import { MAX_DETAIL_LENGTH, type OutcomeEventInput } from './intake.service.js';

/** The largest message taken (a bounce carries at most a copy of the message that bounced). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Recipients one message may report; a larger DSN is refused as malformed. */
export const MAX_RECIPIENTS_PER_MESSAGE = 100;

export type MessageKind = 'dsn' | 'arf';

/** A recipient of the message that became no event, and why. */
export interface IgnoredRecipient {
  /** Absent when the message names no recipient (an ARF report without one). */
  email?: string;
  /** The enhanced status code, when the message gives one. */
  status?: string;
  reason: IgnoredReason;
  message: string;
}

/** The outcomes a message can say (POST /v1/outcomes documents them as an enum). */
export type MessageEventType = 'delivered' | 'hard_bounce' | 'soft_bounce' | 'complaint';

/** An event of a message, with the enhanced status code it rests on (when given). */
export interface MessageEvent extends OutcomeEventInput {
  type: MessageEventType;
  status?: string;
}

/** What one message says: its kind, the events to take, the recipients left out. */
export interface MessageEvents {
  kind: MessageKind;
  events: MessageEvent[];
  ignored: IgnoredRecipient[];
}

const PARSE_OPTIONS = {
  forceRfc822Attachments: true,
  attachmentEncoding: 'utf8',
  maxNestingDepth: 20,
  maxHeadersSize: 256 * 1024,
  maxRfc822NestingDepth: 0,
} as const;

function startsWith(raw: Uint8Array, text: string): boolean {
  return raw.byteLength >= text.length && [...text].every((c, i) => raw[i] === c.charCodeAt(0));
}

/** The offset after the first line feed (the whole length when there is none). */
function lineEnd(raw: Uint8Array): number {
  const at = raw.indexOf(0x0a);
  return at < 0 ? raw.byteLength : at + 1;
}

// The store keeps no address (docs/outcomes.md, "Privacy"): a diagnostic's addresses keep their domain only.
const LOCAL_PART = /[^\s<>"'()[\],;:]+@(?=[a-z0-9[])/gi;

const MAILER_DAEMON = /^(mailer-daemon|mailer_daemon|mailerdaemon|postmaster|mail-daemon|mdaemon)$/i;

/**
 * The events of one raw message: a DSN (RFC 3464, or a text-only bounce from a mailer daemon)
 * or a complaint report (ARF, RFC 5965). Throws AppError `payload_too_large` past
 * MAX_MESSAGE_BYTES, `malformed_message` when it cannot be read as a message, `not_a_bounce`
 * when it is neither a bounce nor a complaint.
 */
export async function eventsFromMessage(raw: Uint8Array): Promise<MessageEvents> {
  if (raw.byteLength > MAX_MESSAGE_BYTES)
    throw new AppError(
      'payload_too_large',
      `the message is larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB`,
    );
  const email = await parse(raw);
  const part = (...types: string[]) =>
    email.attachments.find((a) => types.includes(a.mimeType.toLowerCase()));
  const original = await originalHeaders(email);
  const report = part('message/feedback-report');
  if (report !== undefined) return complaintEvents(email, contentText(report.content), original);
  const status = part('message/delivery-status', 'message/global-delivery-status');
  if (status !== undefined) return dsnEvents(email, contentText(status.content), original);
  return textBounceEvents(email, original);
}

async function parse(input: Uint8Array): Promise<Email> {
  // A message piped from procmail or an mbox starts with its envelope "From " line: not a header.
  const raw = startsWith(input, 'From ') ? input.subarray(lineEnd(input)) : input;
  // A message starts with a header field; anything else (a JSON body, a text file) is no message.
  const head = new TextDecoder('latin1').decode(raw.subarray(0, 200));
  if (!/^[A-Za-z0-9-]+[ \t]*:/.test(head))
    throw new AppError(
      'malformed_message',
      'the body is not an RFC 5322 message: it does not start with a header field',
    );
  try {
    return await PostalMime.parse(raw, PARSE_OPTIONS);
  } catch (err) {
    throw new AppError('malformed_message', `the message could not be parsed: ${(err as Error).message}`);
  }
}

function contentText(content: ArrayBuffer | Uint8Array | string): string {
  return typeof content === 'string' ? content : new TextDecoder().decode(content);
}

/** The headers of the message that bounced or was reported, from its `message/rfc822` or `text/rfc822-headers` part. */
async function originalHeaders(email: Email): Promise<Email | null> {
  const copy = email.attachments.find((a) =>
    ['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers'].includes(
      a.mimeType.toLowerCase(),
    ),
  );
  if (copy === undefined) return null;
  try {
    return await PostalMime.parse(contentText(copy.content), { ...PARSE_OPTIONS, maxNestingDepth: 5 });
  } catch {
    return null;
  }
}

function dsnEvents(email: Email, statusPart: string, original: Email | null): MessageEvents {
  const [perMessage, ...recipients] = parseFieldGroups(statusPart);
  // A part that starts with a recipient group (no per-message fields) is read all the same.
  const groups = perMessage?.get('final-recipient') !== undefined ? [perMessage, ...recipients] : recipients;
  if (groups.length === 0)
    throw new AppError('malformed_message', 'the delivery-status part reports no recipient');
  if (groups.length > MAX_RECIPIENTS_PER_MESSAGE)
    throw new AppError(
      'malformed_message',
      `the message reports more than ${MAX_RECIPIENTS_PER_MESSAGE} recipients`,
    );
  const at = timeOf(perMessage?.get('arrival-date'), email.date);
  const sourceId = sourceIdOf(original, perMessage, email);
  const out: MessageEvents = { kind: 'dsn', events: [], ignored: [] };
  for (const group of groups) {
    const recipient =
      addressOfField(group.get('original-recipient')) ?? addressOfField(group.get('final-recipient'));
    const diagnostic = diagnosticText(group.get('diagnostic-code'));
    addVerdict(
      out,
      recipient,
      { action: group.get('action'), status: group.get('status'), diagnostic },
      at,
      sourceId,
    );
  }
  return out;
}

function textBounceEvents(email: Email, original: Email | null): MessageEvents {
  const fromDaemon = [email.from, email.sender].some(
    (a) => a !== undefined && 'address' in a && MAILER_DAEMON.test(a.address?.split('@')[0] ?? ''),
  );
  const text = email.text ?? '';
  if (!fromDaemon || !TEXT_BOUNCE_OPENINGS.test(text))
    throw new AppError(
      'not_a_bounce',
      'the message is neither a delivery status notification nor a complaint report (ARF); nothing was taken',
    );
  const sender = (email.to ?? []).flatMap((a) => ('address' in a && a.address ? [a.address] : []));
  const recipients = textBounceRecipients(text, sender);
  if (recipients.length === 0)
    throw new AppError(
      'not_a_bounce',
      'the bounce names no recipient with an SMTP answer; nothing was taken',
    );
  if (recipients.length > MAX_RECIPIENTS_PER_MESSAGE)
    throw new AppError(
      'malformed_message',
      `the message reports more than ${MAX_RECIPIENTS_PER_MESSAGE} recipients`,
    );
  // qmail, Yahoo and Exchange quote the original message (or its headers) below a line that says so.
  const copyAt = text.search(COPY_STARTS);
  const inline =
    copyAt < 0 ? undefined : /^message-id:[ \t]*(<[^>\r\n]{1,250}>)/im.exec(text.slice(copyAt))?.[1];
  const sourceId = cleanId(original?.messageId ?? inline ?? email.messageId);
  const at = timeOf(undefined, email.date);
  const out: MessageEvents = { kind: 'dsn', events: [], ignored: [] };
  for (const r of recipients)
    addVerdict(out, r.email, { action: 'failed', status: r.status, diagnostic: r.diagnostic }, at, sourceId);
  return out;
}

function addVerdict(
  out: MessageEvents,
  email: string | null,
  input: { action?: string | undefined; status?: string | undefined; diagnostic?: string | undefined },
  at: string | undefined,
  sourceId: string | undefined,
): void {
  const verdict = classifyBounce(input);
  if (email === null) {
    out.ignored.push({
      ...(verdict.status === null ? {} : { status: verdict.status }),
      reason: 'no_recipient',
      message: 'the recipient group has no rfc822 Final-Recipient',
    });
    return;
  }
  if ('ignored' in verdict) {
    out.ignored.push({
      email,
      ...(verdict.status === null ? {} : { status: verdict.status }),
      reason: verdict.ignored,
      message: verdict.message,
    });
    return;
  }
  const said = input.diagnostic?.slice(0, 2 * MAX_DETAIL_LENGTH).replace(LOCAL_PART, '*@');
  const detail = said ?? (verdict.status === null ? undefined : `Status: ${verdict.status}`);
  out.events.push({
    email,
    type: verdict.type,
    ...(verdict.status === null ? {} : { status: verdict.status }),
    ...(at === undefined ? {} : { at }),
    ...(detail === undefined ? {} : { detail }),
    ...(sourceId === undefined ? {} : { source_id: sourceId }),
  });
}

function complaintEvents(email: Email, reportPart: string, original: Email | null): MessageEvents {
  const fields = parseFieldGroups(reportPart)[0];
  if (fields === undefined) throw new AppError('malformed_message', 'the feedback-report part is empty');
  const feedbackType = fields.get('feedback-type')?.toLowerCase();
  if (feedbackType === undefined)
    throw new AppError('malformed_message', 'the feedback-report part has no Feedback-Type');
  const named = [...fields.all('original-rcpt-to'), ...fields.all('removal-recipient')]
    .map((v) => addressOfField(v))
    .filter((a): a is string => a !== null);
  const toOfOriginal = (original?.to ?? []).flatMap((a) => ('address' in a && a.address ? [a.address] : []));
  // The original's To names the complaining recipient only when it names one address.
  const recipients = [
    ...new Map(
      (named.length > 0 ? named : toOfOriginal.length === 1 ? toOfOriginal : []).map((a) => [
        a.toLowerCase(),
        a,
      ]),
    ).values(),
  ];
  const out: MessageEvents = { kind: 'arf', events: [], ignored: [] };
  if (recipients.length === 0) {
    out.ignored.push({
      reason: 'no_recipient',
      message:
        'the report names no recipient (no Original-Rcpt-To or Removal-Recipient, and the original message has not one To address)',
    });
    return out;
  }
  if (recipients.length > MAX_RECIPIENTS_PER_MESSAGE)
    throw new AppError(
      'malformed_message',
      `the report names more than ${MAX_RECIPIENTS_PER_MESSAGE} recipients`,
    );
  const at = timeOf(fields.get('arrival-date') ?? fields.get('received-date'), email.date);
  const sourceId = sourceIdOf(original, fields, email);
  for (const recipient of recipients) {
    if (feedbackType !== 'abuse') {
      out.ignored.push({
        email: recipient,
        reason: 'feedback_type',
        message: `Feedback-Type "${feedbackType}" is not a complaint (only "abuse" is)`,
      });
      continue;
    }
    out.events.push({
      email: recipient,
      type: 'complaint',
      ...(at === undefined ? {} : { at }),
      detail: `Feedback-Type: abuse${fields.get('user-agent') ? `; ${fields.get('user-agent')}` : ''}`,
      ...(sourceId === undefined ? {} : { source_id: sourceId }),
    });
  }
  return out;
}

/** The Arrival-Date when it reads as a date, else the report's own Date; undefined: intake's now. */
function timeOf(field: string | undefined, reportDate: string | undefined): string | undefined {
  for (const value of [field, reportDate]) {
    // Date.parse takes almost anything ("5" is a year); a date field has a year and a time of day.
    if (value === undefined || !/\b\d{4}\b/.test(value) || !/\d:\d\d/.test(value)) continue;
    const time = Date.parse(value);
    if (!Number.isNaN(time)) return new Date(time).toISOString();
  }
  return undefined;
}

/** The original message's Message-ID (Gmail also writes X-Original-Message-ID), else the report's own. */
function sourceIdOf(
  original: Email | null,
  fields: FieldGroup | undefined,
  email: Email,
): string | undefined {
  return cleanId(original?.messageId ?? fields?.get('x-original-message-id') ?? email.messageId);
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;

function cleanId(id: string | undefined): string | undefined {
  const clean = id
    ?.replace(CONTROL, '')
    .trim()
    .replace(/^<(.*)>$/, '$1')
    .slice(0, 200);
  return clean === undefined || clean === '' ? undefined : clean;
}

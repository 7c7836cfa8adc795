/**
 * The fields of a `message/delivery-status` part (RFC 3464 section 2) and of a
 * `message/feedback-report` part (RFC 5965 section 3.1), which no MIME parser reads: the part is
 * a body, not headers. Both are groups of header-style `Name: value` fields separated by blank
 * lines (the first group is about the message, each next one about a recipient in a DSN), with
 * folded continuation lines. Field names are matched without regard to case; a field may repeat
 * (an ARF report's `Original-Rcpt-To`). Anything else on a line (no colon) is skipped: the MTAs
 * that write these parts are not all strict.
 */

/** One group: its fields in order, names lower-cased. */
export class FieldGroup {
  constructor(readonly fields: readonly (readonly [name: string, value: string])[]) {}

  /** The first value of `name`, trimmed; undefined when absent or empty. */
  get(name: string): string | undefined {
    const found = this.fields.find(([n]) => n === name)?.[1].trim();
    return found === '' ? undefined : found;
  }

  /** Every non-empty value of `name`, trimmed. */
  all(name: string): string[] {
    return this.fields.filter(([n, v]) => n === name && v.trim() !== '').map(([, v]) => v.trim());
  }
}

/** Fields one part may hold; a part with more is cut there (a DSN's groups carry some ten each). */
export const MAX_FIELDS = 5_000;

const FIELD = /^([!-9;-~]+)[ \t]*:(.*)$/;

/** The groups of a delivery-status or feedback-report part, blank lines between them. */
export function parseFieldGroups(text: string): FieldGroup[] {
  const groups: FieldGroup[] = [];
  let current: [string, string][] = [];
  let count = 0;
  const close = (): void => {
    if (current.length > 0) groups.push(new FieldGroup(current));
    current = [];
  };
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      close();
      continue;
    }
    const last = current.at(-1);
    if ((line.startsWith(' ') || line.startsWith('\t')) && last !== undefined) {
      last[1] += ` ${line.trim()}`;
      continue;
    }
    const match = FIELD.exec(line);
    if (match === null || ++count > MAX_FIELDS) continue;
    current.push([match[1]!.toLowerCase(), match[2]!]);
  }
  close();
  return groups;
}

/**
 * The address of a typed address field (`Final-Recipient: rfc822; jane@example.com`, RFC 3464
 * 2.3.2; `utf-8;` of RFC 6533), angle brackets dropped; an untyped value is taken as it is (ARF's
 * `Original-Rcpt-To` and `Removal-Recipient` carry none). Another address type (`x400;`) is no
 * e-mail address: null.
 */
export function addressOfField(value: string | undefined): string | null {
  if (value === undefined) return null;
  const semi = value.indexOf(';');
  let address = value;
  if (semi >= 0) {
    const type = value.slice(0, semi).trim().toLowerCase();
    if (type !== 'rfc822' && type !== 'utf-8') return null;
    address = value.slice(semi + 1);
  }
  address = address
    .trim()
    .replace(/^<(.*)>$/, '$1')
    .trim();
  return address === '' ? null : address;
}

/** The text of a `Diagnostic-Code: smtp; 550 …` field without its type. */
export function diagnosticText(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const semi = value.indexOf(';');
  const text = (
    semi >= 0 && /^[a-z-]+$/i.test(value.slice(0, semi).trim()) ? value.slice(semi + 1) : value
  ).trim();
  return text === '' ? undefined : text;
}

/** An enhanced status code (RFC 3463): class 2, 4 or 5, subject, detail. */
export interface EnhancedStatus {
  cls: 2 | 4 | 5;
  subject: number;
  detail: number;
}

const ENHANCED = /(?:^|[^\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d.]*\d)/;

/** The first enhanced status code in `text` (`5.1.1`, `4.2.2`), or null. */
export function findEnhancedStatus(text: string | undefined): EnhancedStatus | null {
  const match = text === undefined ? null : ENHANCED.exec(text);
  if (match === null) return null;
  return { cls: Number(match[1]) as 2 | 4 | 5, subject: Number(match[2]), detail: Number(match[3]) };
}

export function formatStatus(status: EnhancedStatus): string {
  return `${status.cls}.${status.subject}.${status.detail}`;
}

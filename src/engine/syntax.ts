/**
 * RFC 5321 Mailbox syntax: the first gate. Whatever this rejects never reaches a DNS query or
 * the SMTP wire, so it is strict where the RFCs leave room (see docs/verdicts.md, "Syntax").
 *
 * Accepted: dot-string and quoted-string local parts (the empty quoted string `""` included, as
 * RFC 5321's grammar allows), UTF-8 in the local part (RFC 6531, SMTPUTF8), domains of two or
 * more LDH labels (internationalised names converted to punycode with IDNA), and [IPv4] /
 * [IPv6:...] address literals.
 * Rejected: RFC 5322 message syntax (comments, folding whitespace, obsolete forms), control
 * and invisible characters anywhere, single-label domains such as `localhost`, labels that break
 * the IDNA hyphen rules (`-ü`, `ab--cd`: "--" in the third and fourth positions is reserved by
 * RFC 5890 except in A-labels), xn-- labels that are not the Punycode of a valid U-label, general
 * address literals, and anything over the length limits.
 */
import { createRequire } from 'node:module';
import { isIPv4, isIPv6 } from 'node:net';
import type { ParsedAddress } from './types.js';

/** RFC 5321 §4.5.3.1.3: a path is at most 256 octets including the angle brackets. */
export const MAX_ADDRESS_OCTETS = 254;
/** RFC 5321 §4.5.3.1.1. */
export const MAX_LOCAL_OCTETS = 64;
/** RFC 1035 §2.3.4 (label) and the 255-octet wire name without its trailing dot. */
export const MAX_LABEL_OCTETS = 63;
export const MAX_DOMAIN_OCTETS = 253;

// Inputs longer than this are rejected before any parsing work, so a huge string costs nothing.
const MAX_INPUT_CHARS = 1024;

// C0, DEL and C1 controls: CR, LF and NUL above all, which could smuggle SMTP commands.
const CONTROL = /\p{Cc}/u;
// Invisible characters that make an address look like another: format characters (bidi
// overrides, zero-width joiners, soft hyphen), lone surrogates, line/paragraph separators and
// non-ASCII spaces.
const INVISIBLE = /[\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u;

// RFC 5321 atext plus, per RFC 6531, any non-ASCII character (controls were rejected before).
const ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~\u0080-\u{10ffff}]+$/u;
// RFC 5321 qtextSMTP (printable ASCII but `"` and `\`) plus non-ASCII (RFC 6531).
const QTEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e\u0080-\u{10ffff}]$/u;
const LDH_LABEL = /^[a-z0-9-]+$/;
const NUMERIC_TLD = /^(?:[0-9]+|0x[0-9a-f]*)$/;

const INVALID_A_LABEL = 'domain has an invalid punycode (xn--) label';

// IDNA comes from tr46 (UTS #46, the library behind whatwg-url), not node:url's domainToASCII:
// that one applies the URL Standard's lenient options (no hyphen, right-to-left or joiner rules),
// and its answer changes with the Node version (Node 20 refuses `xn--zz.com`, Node 24 accepts it).
type IdnaOptions = {
  checkHyphens: boolean;
  checkBidi: boolean;
  checkJoiners: boolean;
  useSTD3ASCIIRules: boolean;
  transitionalProcessing: boolean;
  verifyDNSLength: boolean;
  ignoreInvalidPunycode: boolean;
};
const tr46 = createRequire(import.meta.url)('tr46') as {
  toASCII(domain: string, options: IdnaOptions): string | null;
  toUnicode(domain: string, options: IdnaOptions): { domain: string; error: boolean };
};
// RFC 5891 §4.2.3.1 hyphen rules, RFC 5893 right-to-left rules, RFC 5892 joiner rules, letters,
// digits and hyphens only, and nontransitional processing (`faß` stays `faß`, as in IDNA2008).
// Lengths are left to checkLdhDomain, whose errors say which limit was passed.
const IDNA: IdnaOptions = {
  checkHyphens: true,
  checkBidi: true,
  checkJoiners: true,
  useSTD3ASCIIRules: true,
  transitionalProcessing: false,
  verifyDNSLength: false,
  ignoreInvalidPunycode: false,
};

const encoder = new TextEncoder();
const octets = (s: string): number => encoder.encode(s).length;

type Part = { ok: true; value: string } | { ok: false; error: string };
const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

/**
 * Parses an RFC 5321 Mailbox. Never throws; on failure `error` is a short human-readable
 * reason. On success the local part is kept exactly as given and the domain is lower-cased and
 * converted to its ASCII (punycode) form.
 */
export function parseAddress(input: string): ParsedAddress {
  // Library users calling from JavaScript may pass anything.
  if (typeof input !== 'string') return fail('address is not a string');
  if (input === '') return fail('address is empty');
  if (input.length > MAX_INPUT_CHARS) return fail(`address longer than ${MAX_ADDRESS_OCTETS} octets`);
  if (CONTROL.test(input)) return fail('address contains a control character');
  if (INVISIBLE.test(input)) return fail('address contains an invisible or non-printable character');
  if (input.trim() !== input) return fail('address has leading or trailing whitespace');

  const split = splitAtSign(input);
  if (!split.ok) return split;
  const { local, rest } = split;

  const localCheck = checkLocal(local);
  if (!localCheck.ok) return localCheck;
  if (octets(local) > MAX_LOCAL_OCTETS) return fail(`local part longer than ${MAX_LOCAL_OCTETS} octets`);

  if (rest === '') return fail('domain is empty');
  const literal = rest.startsWith('[');
  const domain = literal ? parseLiteral(rest) : parseDomain(rest);
  if (!domain.ok) return domain;

  const address = addressIdentity({ local, domain: domain.value });
  if (octets(address) > MAX_ADDRESS_OCTETS) return fail(`address longer than ${MAX_ADDRESS_OCTETS} octets`);
  return { ok: true, local, domain: domain.value, address, literal };
}

/**
 * An address's identity: two well-formed addresses are the same address exactly when their
 * identities are equal. The local part as given (RFC 5321 leaves its case to the receiving server;
 * `case-folded` for the outcomes, which match a bounce reported as `jane@` with the `Jane@` that was
 * verified, docs/outcomes.md) and the domain as parseAddress gives it: lower-cased, in its ASCII
 * (A-label) form, so `jane@bücher.example` and `jane@xn--bcher-kva.example` are one address.
 * `parseAddress` returns it as `address`; the result cache, the batch grouping, the outcomes'
 * address key and the chunks' repeat finder (through `identityOf`) all key on it.
 */
export function addressIdentity(
  address: { local: string; domain: string },
  localCase: 'as-given' | 'case-folded' = 'as-given',
): string {
  return `${localCase === 'case-folded' ? address.local.toLowerCase() : address.local}@${address.domain}`;
}

/**
 * `addressIdentity` of any string, for the batch intake, which keys every submitted string before
 * it is parsed. A plain ASCII domain only needs lower-casing (what IDNA does to it), so only a
 * non-ASCII domain or an address literal pays for the parse (IDNA costs about 12 us a name). A
 * string that is not an address gets a key of the same shape (its domain lower-cased), which no
 * well-formed address has.
 */
export function identityOf(input: string): string {
  const at = input.lastIndexOf('@');
  if (at < 0) return input;
  const domain = input.slice(at + 1);
  if (!domain.startsWith('[') && ASCII.test(domain)) return `${input.slice(0, at)}@${domain.toLowerCase()}`;
  const parsed = parseAddress(input);
  return parsed.ok ? parsed.address : `${input.slice(0, at)}@${domain.toLowerCase()}`;
}
const ASCII = /^\p{ASCII}*$/u;

/** True when the local part needs the SMTPUTF8 extension (RFC 6531) to be sent on the wire. */
export function needsSmtpUtf8(local: string): boolean {
  return /\P{ASCII}/u.test(local);
}

function splitAtSign(
  input: string,
): { ok: true; local: string; rest: string } | { ok: false; error: string } {
  if (input.startsWith('"')) {
    const end = quotedStringEnd(input);
    if (end === -1) return fail('unterminated quoted local part');
    const local = input.slice(0, end + 1);
    if (input[end + 1] !== '@') {
      return fail(
        input.length === end + 1 ? 'missing @ and domain' : 'unexpected text after quoted local part',
      );
    }
    return { ok: true, local, rest: input.slice(end + 2) };
  }
  const at = input.indexOf('@');
  if (at === -1) return fail('missing @ and domain');
  const rest = input.slice(at + 1);
  if (rest.includes('@')) return fail('more than one @ outside a quoted local part');
  return { ok: true, local: input.slice(0, at), rest };
}

/** Index of the closing quote of a quoted string starting at 0, or -1 when there is none. */
function quotedStringEnd(input: string): number {
  for (let i = 1; i < input.length; i++) {
    const c = input[i];
    if (c === '\\') i++;
    else if (c === '"') return i;
  }
  return -1;
}

function checkLocal(local: string): Part {
  if (local === '') return fail('local part is empty');
  return local.startsWith('"') ? checkQuoted(local) : checkDotString(local);
}

function checkDotString(local: string): Part {
  if (local.startsWith('.') || local.endsWith('.')) return fail('local part starts or ends with a dot');
  for (const atom of local.split('.')) {
    if (atom === '') return fail('local part has two dots in a row');
    if (!ATOM.test(atom)) {
      const bad = [...atom].find((c) => !ATOM.test(c)) ?? '';
      return fail(`local part contains "${bad}" outside quotes`);
    }
  }
  return { ok: true, value: local };
}

// `local` is `"` ... `"` with the closing quote found by quotedStringEnd.
function checkQuoted(local: string): Part {
  // RFC 5321's Quoted-string is DQUOTE *QcontentSMTP DQUOTE, so `""` is a local part (erratum
  // 5414 would require one character, but it is only held for a future revision).
  const body = [...local.slice(1, -1)];
  for (let i = 0; i < body.length; i++) {
    const c = body[i] ?? '';
    if (c === '\\') {
      // RFC 5321 quoted-pairSMTP: a backslash escapes one printable ASCII character or space.
      const next = body[++i] ?? '';
      if (!/^[\x20-\x7e]$/.test(next)) return fail('invalid escape in quoted local part');
    } else if (!QTEXT.test(c)) {
      return fail(`quoted local part contains "${c}" unescaped`);
    }
  }
  return { ok: true, value: local };
}

function parseLiteral(rest: string): Part {
  if (!rest.endsWith(']')) return fail('address literal is missing its closing bracket');
  const body = rest.slice(1, -1);
  if (/^ipv6:/i.test(body)) {
    const ip = body.slice(5);
    // Zone identifiers (fe80::1%eth0) are local to one host and not part of RFC 5321's grammar.
    if (ip.includes('%') || !isIPv6(ip)) return fail('invalid IPv6 address literal');
    return { ok: true, value: `[IPv6:${ip.toLowerCase()}]` };
  }
  if (/^[0-9.]+$/.test(body)) {
    // node:net rejects leading zeros, which some stacks would read as octal.
    if (!isIPv4(body)) return fail('invalid IPv4 address literal');
    return { ok: true, value: `[${body}]` };
  }
  return fail('unsupported address literal (only IPv4 and IPv6 are accepted)');
}

function parseDomain(raw: string): Part {
  if (/^\p{ASCII}*$/u.test(raw)) {
    // ASCII needs no mapping, so the LDH rules decide it, with clearer errors than IDNA's null.
    // Only names with an A-label go on to IDNA, which costs about 12 us a name (tr46 6.0.0 on
    // Node 20; domainToASCII took 0.3 us).
    const domain = raw.toLowerCase();
    const ldh = checkLdhDomain(domain);
    if (!ldh.ok || !/(^|\.)xn--/.test(domain)) return ldh;
  }
  const labels = idnaLabels(raw);
  if (labels.some((label) => label.startsWith('xn--') && !isALabel(label))) return fail(INVALID_A_LABEL);
  const converted = tr46.toASCII(raw, IDNA);
  if (converted === null) return fail(idnaError(raw, labels));
  return checkLdhDomain(converted);
}

// The labels as IDNA sees them after mapping (NFKC and lower case come close enough for this),
// so that `ｘｎ－－...` or `例子。xn--...` are recognised as A-labels too.
function idnaLabels(raw: string): string[] {
  return raw
    .normalize('NFKC')
    .toLowerCase()
    .split(/[.\u3002]/);
}

// RFC 5890 §2.3.2.1 and RFC 5891 §5.4: an A-label is the Punycode of a valid U-label, and encoding
// that U-label again must give the same A-label (a decoder may accept what no encoder writes).
function isALabel(label: string): boolean {
  const decoded = tr46.toUnicode(label, IDNA);
  return !decoded.error && tr46.toASCII(decoded.domain, IDNA) === label;
}

// tr46 only answers null; name the rule the domain broke. Without the LDH and right-to-left
// checks it converts names that break only those, and the ASCII form shows what is wrong with it.
function idnaError(raw: string, labels: string[]): string {
  for (const label of labels) {
    const hyphens = hyphenError(label);
    if (hyphens !== null) return hyphens;
  }
  const lenient = tr46.toASCII(raw, { ...IDNA, useSTD3ASCIIRules: false, checkBidi: false });
  if (lenient === null) return 'invalid internationalised domain name';
  const ldh = checkLdhDomain(lenient);
  return ldh.ok ? 'domain breaks the IDNA right-to-left rules (RFC 5893)' : ldh.error;
}

// RFC 1034 LDH labels and RFC 5891 §4.2.3.1 U-labels alike: no hyphen first or last, and no "--"
// in the third and fourth positions (code points), which RFC 5890 §2.3.1 reserves for A-labels.
function hyphenError(label: string): string | null {
  if (label.startsWith('-') || label.endsWith('-')) return 'domain label starts or ends with a hyphen';
  const [, , third, fourth] = label;
  if (third === '-' && fourth === '-' && !label.startsWith('xn--')) {
    return 'domain label has "--" in the third and fourth positions (reserved for IDNA)';
  }
  return null;
}

function checkLdhDomain(domain: string): Part {
  const labels = domain.split('.');
  for (const label of labels) {
    if (label === '') return fail('domain has an empty label (leading, trailing or double dot)');
    if (label.length > MAX_LABEL_OCTETS) return fail(`domain label longer than ${MAX_LABEL_OCTETS} octets`);
    const hyphens = hyphenError(label);
    if (hyphens !== null) return fail(hyphens);
    if (!LDH_LABEL.test(label)) {
      return fail('domain contains a character other than letters, digits, hyphens and dots');
    }
  }
  if (labels.length < 2) return fail('domain needs at least two labels (e.g. example.com)');
  // A numeric last label (decimal or 0x-hex) would make URL-style parsers read the name as IPv4.
  if (NUMERIC_TLD.test(labels[labels.length - 1] ?? '')) return fail('top-level domain is numeric');
  if (domain.length > MAX_DOMAIN_OCTETS) return fail(`domain longer than ${MAX_DOMAIN_OCTETS} octets`);
  return { ok: true, value: domain };
}

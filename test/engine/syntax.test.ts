import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { needsSmtpUtf8, parseAddress } from '../../src/engine/syntax.js';

type Accepted = { input: string; local: string; domain: string; literal?: boolean };
type Rejected = { input: string; error: string };

const accepted: Accepted[] = [
  { input: 'john@example.com', local: 'john', domain: 'example.com' },
  { input: 'John.Doe@Example.COM', local: 'John.Doe', domain: 'example.com' },
  { input: "o'brien+tag@sub.example.co.uk", local: "o'brien+tag", domain: 'sub.example.co.uk' },
  { input: "!#$%&'*+-/=?^_`{|}~@example.com", local: "!#$%&'*+-/=?^_`{|}~", domain: 'example.com' },
  { input: '"john doe"@example.com', local: '"john doe"', domain: 'example.com' },
  { input: '"a@b"@example.com', local: '"a@b"', domain: 'example.com' },
  { input: '"a\\"b\\\\c"@example.com', local: '"a\\"b\\\\c"', domain: 'example.com' },
  { input: '"(comment-like)"@example.com', local: '"(comment-like)"', domain: 'example.com' },
  { input: 'user@[127.0.0.1]', local: 'user', domain: '[127.0.0.1]', literal: true },
  { input: 'user@[IPv6:::1]', local: 'user', domain: '[IPv6:::1]', literal: true },
  { input: 'user@[ipv6:2001:DB8::1]', local: 'user', domain: '[IPv6:2001:db8::1]', literal: true },
  { input: 'user@[IPv6:::ffff:192.0.2.1]', local: 'user', domain: '[IPv6:::ffff:192.0.2.1]', literal: true },
  { input: 'jörg@bücher.de', local: 'jörg', domain: 'xn--bcher-kva.de' },
  { input: 'a@BÜCHER.DE', local: 'a', domain: 'xn--bcher-kva.de' },
  { input: 'a@xn--bcher-kva.de', local: 'a', domain: 'xn--bcher-kva.de' },
  { input: '用户@例子.广告', local: '用户', domain: 'xn--fsqu00a.xn--4rr70v' },
  { input: 'a@ｅｘａｍｐｌｅ.com', local: 'a', domain: 'example.com' },
  { input: 'a@1.2.3.com', local: 'a', domain: '1.2.3.com' },
  { input: 'a@x-y.z9', local: 'a', domain: 'x-y.z9' },
];

const rejected: Rejected[] = [
  { input: '', error: 'address is empty' },
  { input: 'plainaddress', error: 'missing @ and domain' },
  { input: '@example.com', error: 'local part is empty' },
  { input: 'john@', error: 'domain is empty' },
  { input: 'a@b@example.com', error: 'more than one @ outside a quoted local part' },
  { input: '.john@example.com', error: 'local part starts or ends with a dot' },
  { input: 'john.@example.com', error: 'local part starts or ends with a dot' },
  { input: 'jo..hn@example.com', error: 'local part has two dots in a row' },
  { input: 'john doe@example.com', error: 'local part contains " " outside quotes' },
  { input: 'john(comment)@example.com', error: 'local part contains "(" outside quotes' },
  { input: 'a"b@example.com', error: 'local part contains """ outside quotes' },
  { input: '"unterminated@example.com', error: 'unterminated quoted local part' },
  { input: '"john"doe@example.com', error: 'unexpected text after quoted local part' },
  { input: '"a\\é"@example.com', error: 'invalid escape in quoted local part' },
  { input: ' john@example.com', error: 'address has leading or trailing whitespace' },
  { input: 'john@example.com ', error: 'address has leading or trailing whitespace' },
  { input: 'john@example.com\r\nRCPT TO:<x@evil.com>', error: 'address contains a control character' },
  { input: '"a\r\nb"@example.com', error: 'address contains a control character' },
  { input: 'jo\u0000hn@example.com', error: 'address contains a control character' },
  { input: 'john@exa\tmple.com', error: 'address contains a control character' },
  { input: 'jo\u0085hn@example.com', error: 'address contains a control character' },
  { input: 'jo\u200bhn@example.com', error: 'address contains an invisible or non-printable character' },
  { input: 'john\u202e@example.com', error: 'address contains an invisible or non-printable character' },
  { input: '"a\u00a0b"@example.com', error: 'address contains an invisible or non-printable character' },
  { input: 'a\ud800@example.com', error: 'address contains an invisible or non-printable character' },
  { input: 'john@localhost', error: 'domain needs at least two labels (e.g. example.com)' },
  { input: 'john@example', error: 'domain needs at least two labels (e.g. example.com)' },
  { input: 'john@example.com.', error: 'domain has an empty label (leading, trailing or double dot)' },
  { input: 'john@.example.com', error: 'domain has an empty label (leading, trailing or double dot)' },
  { input: 'john@example..com', error: 'domain has an empty label (leading, trailing or double dot)' },
  { input: 'john@-example.com', error: 'domain label starts or ends with a hyphen' },
  { input: 'john@example-.com', error: 'domain label starts or ends with a hyphen' },
  {
    input: 'john@exa_mple.com',
    error: 'domain contains a character other than letters, digits, hyphens and dots',
  },
  {
    input: 'john@(comment)example.com',
    error: 'domain contains a character other than letters, digits, hyphens and dots',
  },
  { input: 'john@example.123', error: 'top-level domain is numeric' },
  { input: 'john@example.0x1f', error: 'top-level domain is numeric' },
  { input: 'john@1.2.3.4', error: 'top-level domain is numeric' },
  { input: 'john@xn--zz.com', error: 'domain has an invalid punycode (xn--) label' },
  { input: 'john@bücher..de', error: 'domain has an empty label (leading, trailing or double dot)' },
  { input: 'john@[127.0.0.1', error: 'address literal is missing its closing bracket' },
  { input: 'john@[1.2.3]', error: 'invalid IPv4 address literal' },
  { input: 'john@[256.1.1.1]', error: 'invalid IPv4 address literal' },
  { input: 'john@[01.2.3.4]', error: 'invalid IPv4 address literal' },
  { input: 'john@[IPv6:1::2::3]', error: 'invalid IPv6 address literal' },
  { input: 'john@[IPv6:fe80::1%eth0]', error: 'invalid IPv6 address literal' },
  { input: 'john@[::1]', error: 'unsupported address literal (only IPv4 and IPv6 are accepted)' },
  { input: 'john@[x-tag:content]', error: 'unsupported address literal (only IPv4 and IPv6 are accepted)' },
  { input: `${'a'.repeat(65)}@example.com`, error: 'local part longer than 64 octets' },
  { input: `${'é'.repeat(33)}@example.com`, error: 'local part longer than 64 octets' },
  { input: `a@${'b'.repeat(64)}.com`, error: 'domain label longer than 63 octets' },
  { input: `a@${'x'.repeat(2000)}.com`, error: 'address longer than 254 octets' },
];

describe('parseAddress: tricky cases', () => {
  it.each(accepted)('accepts $input', ({ input, local, domain, literal = false }) => {
    expect(parseAddress(input)).toEqual({ ok: true, local, domain, address: `${local}@${domain}`, literal });
  });

  it.each(rejected)('rejects $input', ({ input, error }) => {
    expect(parseAddress(input)).toEqual({ ok: false, error });
  });
});

type Case = { behaviour: string; input: string } & ({ local: string; domain: string } | { error: string });

const expectCase = (c: Case): void => {
  if ('error' in c) {
    expect(parseAddress(c.input)).toEqual({ ok: false, error: c.error });
  } else {
    const address = `${c.local}@${c.domain}`;
    expect(parseAddress(c.input)).toEqual({
      ok: true,
      local: c.local,
      domain: c.domain,
      address,
      literal: false,
    });
  }
};

// RFC 5321 §4.1.2: Quoted-string = DQUOTE *QcontentSMTP DQUOTE, QcontentSMTP = qtextSMTP /
// quoted-pairSMTP, qtextSMTP = %d32-33 / %d35-91 / %d93-126 (RFC 6531 adds UTF8-non-ascii),
// quoted-pairSMTP = %d92 %d32-126.
const quotedStrings: Case[] = [
  {
    behaviour: 'accepts the empty quoted string, as *QcontentSMTP allows',
    input: '""@example.com',
    local: '""',
    domain: 'example.com',
  },
  {
    behaviour: 'accepts a lone space inside quotes',
    input: '" "@example.com',
    local: '" "',
    domain: 'example.com',
  },
  {
    behaviour: 'accepts a backslash before a space',
    input: '"\\ "@example.com',
    local: '"\\ "',
    domain: 'example.com',
  },
  {
    behaviour: 'accepts a backslash before any printable ASCII character',
    input: '"\\a\\~\\!\\@"@example.com',
    local: '"\\a\\~\\!\\@"',
    domain: 'example.com',
  },
  {
    behaviour: 'accepts dots anywhere inside quotes',
    input: '".a..b."@example.com',
    local: '".a..b."',
    domain: 'example.com',
  },
  {
    behaviour: 'accepts UTF-8 inside quotes (RFC 6531)',
    input: '"jörg müller"@example.com',
    local: '"jörg müller"',
    domain: 'example.com',
  },
  {
    behaviour: 'rejects a backslash before a non-ASCII character, which quoted-pairSMTP does not allow',
    input: '"\\用"@example.com',
    error: 'invalid escape in quoted local part',
  },
  {
    behaviour: 'rejects a backslash before a tab',
    input: '"\\\t"@example.com',
    error: 'address contains a control character',
  },
  {
    behaviour: 'rejects a backslash before DEL',
    input: '"\\\x7f"@example.com',
    error: 'address contains a control character',
  },
  {
    behaviour: 'rejects a backslash that escapes the closing quote',
    input: '"a\\"@example.com',
    error: 'unterminated quoted local part',
  },
  {
    behaviour: 'rejects an unescaped quote inside quotes',
    input: '"a"b"@example.com',
    error: 'unexpected text after quoted local part',
  },
  {
    behaviour: 'rejects an empty quoted string followed by a dot-string',
    input: '"".a@example.com',
    error: 'unexpected text after quoted local part',
  },
  {
    behaviour: 'rejects a dot-string followed by a quoted string',
    input: 'a."b"@example.com',
    error: 'local part contains """ outside quotes',
  },
];

describe('parseAddress: quoted-string local parts (RFC 5321 §4.1.2)', () => {
  it.each(quotedStrings)('$behaviour: $input', expectCase);
});

const RESERVED = 'domain label has "--" in the third and fourth positions (reserved for IDNA)';
const HYPHEN_END = 'domain label starts or ends with a hyphen';
const INVALID_A_LABEL = 'domain has an invalid punycode (xn--) label';
const BIDI = 'domain breaks the IDNA right-to-left rules (RFC 5893)';

// RFC 1034/5321 LDH labels, RFC 5890 §2.3 label classes, RFC 5891 §4.2.3 and §5.4, RFC 5892
// (joiners), RFC 5893 (right-to-left).
const labels: Case[] = [
  {
    behaviour: 'accepts "--" in the second and third positions of an ASCII label',
    input: 'a@a--b.com',
    local: 'a',
    domain: 'a--b.com',
  },
  {
    behaviour: 'accepts "--" after the fourth position',
    input: 'a@abcd--e.com',
    local: 'a',
    domain: 'abcd--e.com',
  },
  {
    behaviour: 'refuses an ASCII label with "--" in the third and fourth positions (R-LDH, reserved)',
    input: 'a@ab--cd.com',
    error: RESERVED,
  },
  {
    behaviour: 'refuses a reserved label whatever its case',
    input: 'a@mail.R3--X.com',
    error: RESERVED,
  },
  {
    behaviour: 'accepts "--" in the second and third positions of a U-label',
    input: 'a@ü--a.de',
    local: 'a',
    domain: 'xn----a-goa.de',
  },
  { behaviour: 'refuses a U-label that starts with a hyphen', input: 'a@-ü.de', error: HYPHEN_END },
  { behaviour: 'refuses a U-label that ends with a hyphen', input: 'a@ü-.de', error: HYPHEN_END },
  {
    behaviour: 'refuses a U-label with "--" in the third and fourth positions',
    input: 'a@üb--c.de',
    error: RESERVED,
  },
  {
    behaviour: 'counts U-label positions in code points, not UTF-16 units',
    input: 'a@𠀀b--c.de',
    error: RESERVED,
  },
  {
    behaviour: 'refuses a reserved ASCII label next to a U-label',
    input: 'a@ab--cd.bücher.de',
    error: RESERVED,
  },
  {
    behaviour: 'accepts a valid A-label as it is',
    input: 'a@xn--bcher-kva.de',
    local: 'a',
    domain: 'xn--bcher-kva.de',
  },
  {
    behaviour: 'lower-cases an A-label written in capitals',
    input: 'a@XN--BCHER-KVA.DE',
    local: 'a',
    domain: 'xn--bcher-kva.de',
  },
  {
    behaviour: 'accepts an A-label whose U-label has "--" in the second and third positions',
    input: 'a@xn--b--c-jua.de',
    local: 'a',
    domain: 'xn--b--c-jua.de',
  },
  { behaviour: 'refuses an xn-- label that is not Punycode', input: 'a@XN--ZZ.com', error: INVALID_A_LABEL },
  {
    behaviour: 'refuses an xn-- label that decodes to a control character',
    input: 'a@xn--a.de',
    error: INVALID_A_LABEL,
  },
  {
    behaviour: 'refuses the A-label of a U-label that starts with a hyphen',
    input: 'a@xn----eha.de',
    error: INVALID_A_LABEL,
  },
  {
    behaviour: 'refuses the A-label of a U-label that ends with a hyphen',
    input: 'a@xn----dha.de',
    error: INVALID_A_LABEL,
  },
  {
    behaviour: 'refuses the A-label of a U-label with "--" in the third and fourth positions',
    input: 'a@xn--b--c-zra.de',
    error: INVALID_A_LABEL,
  },
  {
    behaviour: 'refuses the A-label of a U-label in capitals, which IDNA would map',
    input: 'a@xn--wca.de',
    error: INVALID_A_LABEL,
  },
  {
    behaviour: 'refuses the A-label of a U-label with a joiner out of its context (RFC 5892)',
    input: 'a@xn--ab-m1t.de',
    error: INVALID_A_LABEL,
  },
  {
    behaviour: 'refuses the A-label of a U-label that starts with a combining mark',
    input: 'a@xn--1-xmc1cwfdd.com',
    error: INVALID_A_LABEL,
  },
  {
    behaviour: 'refuses the A-label of a U-label with a disallowed character',
    input: 'a@xn--a-ecp.de',
    error: INVALID_A_LABEL,
  },
  {
    behaviour: 'refuses an invalid A-label next to a U-label',
    input: 'a@例子。xn--zz',
    error: INVALID_A_LABEL,
  },
  {
    behaviour: 'maps an A-label written in full-width characters',
    input: 'a@ｘｎ－－bcher-kva.de',
    local: 'a',
    domain: 'xn--bcher-kva.de',
  },
  {
    behaviour: 'keeps ß as it is (nontransitional processing, as in IDNA2008)',
    input: 'a@faß.de',
    local: 'a',
    domain: 'xn--fa-hia.de',
  },
  {
    behaviour: 'accepts ideographic full stops between labels',
    input: 'a@例子。广告',
    local: 'a',
    domain: 'xn--fsqu00a.xn--4rr70v',
  },
  {
    behaviour: 'accepts a right-to-left label',
    input: 'a@שלום.com',
    local: 'a',
    domain: 'xn--9dbne9b.com',
  },
  {
    behaviour: 'refuses a right-to-left label that starts with a digit (RFC 5893 rule 1)',
    input: 'a@1שלום.com',
    error: BIDI,
  },
  {
    behaviour: 'applies the right-to-left rules to every label once one is right-to-left',
    input: 'a@xn--9dbne9b.1com',
    error: BIDI,
  },
  {
    behaviour: 'refuses a U-label that starts with a combining mark',
    input: 'a@\u0301a.de',
    error: 'invalid internationalised domain name',
  },
  {
    behaviour: 'names the bad character of an ASCII label next to a U-label',
    input: 'a@a_b.bücher.de',
    error: 'domain contains a character other than letters, digits, hyphens and dots',
  },
];

describe('parseAddress: domain labels and IDNA (RFC 5890-5893)', () => {
  it.each(labels)('$behaviour: $input', expectCase);

  it('refuses any ASCII label with "--" in the third and fourth positions but an A-label', () => {
    const ldhChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789');
    const reserved = fc
      .tuple(ldhChar, ldhChar, fc.string({ unit: ldhChar, minLength: 1, maxLength: 10 }))
      .filter(([first, second]) => `${first}${second}` !== 'xn')
      .map(([first, second, rest]) => `${first}${second}--${rest}`);
    fc.assert(
      fc.property(reserved, (label) => {
        expect(parseAddress(`a@${label}.com`)).toEqual({ ok: false, error: RESERVED });
      }),
    );
  });

  it('gives the same answer for an internationalised domain and for its A-label form', () => {
    const letter = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzäöüßéèñçøåæœ-');
    const unicodeLabel = fc.string({ unit: letter, minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(unicodeLabel, (label) => {
        const parsed = parseAddress(`a@${label}.de`);
        if (parsed.ok) expect(parseAddress(`a@${parsed.domain}`)).toEqual(parsed);
        else expect(parseAddress(`a@${label}.de`)).toEqual(parsed);
      }),
    );
  });
});

// `count` labels of `size` characters each joined by dots: a domain of an exact length.
const domainOf = (labelSizes: number[]): string =>
  labelSizes.map((n, i) => String.fromCharCode(97 + (i % 26)).repeat(n)).join('.');

describe('parseAddress: length limits', () => {
  it('accepts a local part of exactly 64 octets and rejects 65', () => {
    expect(parseAddress(`${'a'.repeat(64)}@example.com`).ok).toBe(true);
    expect(parseAddress(`${'a'.repeat(65)}@example.com`)).toEqual({
      ok: false,
      error: 'local part longer than 64 octets',
    });
  });

  it('counts the quotes of a quoted local part in its 64 octets', () => {
    expect(parseAddress(`"${'a'.repeat(62)}"@example.com`).ok).toBe(true);
    expect(parseAddress(`"${'a'.repeat(63)}"@example.com`)).toEqual({
      ok: false,
      error: 'local part longer than 64 octets',
    });
  });

  it('counts the local part in UTF-8 octets, not characters', () => {
    expect(parseAddress(`${'é'.repeat(32)}@example.com`).ok).toBe(true);
    expect(parseAddress(`${'é'.repeat(32)}a@example.com`).ok).toBe(false);
  });

  it('accepts a label of exactly 63 octets and rejects 64', () => {
    expect(parseAddress(`a@${'b'.repeat(63)}.com`).ok).toBe(true);
    expect(parseAddress(`a@${'b'.repeat(64)}.com`).ok).toBe(false);
  });

  it('checks the label limit on the punycode form of an internationalised label', () => {
    // 56 characters, but its xn-- label is 73 octets long.
    const unicodeLabel = 'üaöbäcßdéeñfçg'.repeat(4);
    expect(unicodeLabel).toHaveLength(56);
    expect(parseAddress(`a@${unicodeLabel}.de`)).toEqual({
      ok: false,
      error: 'domain label longer than 63 octets',
    });
  });

  it('accepts an address of exactly 254 octets and rejects 255', () => {
    // 64 + 1 + 189 = 254, the domain being labels of 63 + 63 + 61 with two dots.
    const domain254 = domainOf([63, 63, 61]);
    expect(`${'l'.repeat(64)}@${domain254}`).toHaveLength(254);
    expect(parseAddress(`${'l'.repeat(64)}@${domain254}`).ok).toBe(true);
    const domain255 = domainOf([63, 63, 62]);
    expect(parseAddress(`${'l'.repeat(64)}@${domain255}`)).toEqual({
      ok: false,
      error: 'address longer than 254 octets',
    });
  });

  it('rejects a domain longer than 253 octets', () => {
    expect(parseAddress(`a@${domainOf([63, 63, 63, 63])}`)).toEqual({
      ok: false,
      error: 'domain longer than 253 octets',
    });
  });

  it('accepts any lengths within the limits and rejects any beyond them', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 70 }),
        fc.array(fc.integer({ min: 1, max: 66 }), { minLength: 2, maxLength: 5 }),
        (localLength, labelSizes) => {
          const domain = domainOf(labelSizes);
          const address = `${'l'.repeat(localLength)}@${domain}`;
          const withinLimits =
            localLength <= 64 &&
            labelSizes.every((n) => n <= 63) &&
            domain.length <= 253 &&
            address.length <= 254;
          expect(parseAddress(address).ok).toBe(withinLimits);
        },
      ),
    );
  });
});

const atext = fc.constantFrom(
  ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~",
);
const atom = fc.string({ unit: atext, minLength: 1, maxLength: 10 });
const dotAtom = fc.array(atom, { minLength: 1, maxLength: 4 }).map((atoms) => atoms.join('.'));
const ldh = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
const label = fc
  .tuple(ldh, fc.string({ unit: fc.oneof(ldh, fc.constant('-')), maxLength: 12 }), ldh)
  .map(([first, middle, last]) => `${first}${middle}${last}`);
const tld = fc.string({
  unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'),
  minLength: 2,
  maxLength: 6,
});
const asciiDomain = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), tld)
  .map(([labels, top]) => [...labels, top].join('.'))
  // "--" in the third and fourth positions is reserved for A-labels, which the generator cannot make.
  .filter((d) => !/(^|\.)[^.]{2}--/.test(d));
const validAddress = fc.tuple(dotAtom, asciiDomain);

describe('parseAddress: properties', () => {
  it('accepts any dot-atom at an LDH domain, keeps the local part and lower-cases the domain', () => {
    fc.assert(
      fc.property(validAddress, ([local, domain]) => {
        const parsed = parseAddress(`${local}@${domain}`);
        expect(parsed).toEqual({
          ok: true,
          local,
          domain: domain.toLowerCase(),
          address: `${local}@${domain.toLowerCase()}`,
          literal: false,
        });
      }),
    );
  });

  it('round-trips: parsing the normalised address gives the same result', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          validAddress.map(([l, d]) => `${l}@${d}`),
          fc.string({ maxLength: 40 }),
        ),
        (input) => {
          const first = parseAddress(input);
          if (first.ok) expect(parseAddress(first.address)).toEqual(first);
        },
      ),
    );
  });

  it('accepts any quoted string of printable ASCII and escaped pairs, keeping it as given', () => {
    const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
    const qcontent = fc.oneof(
      printable.filter((c) => c !== '"' && c !== '\\'),
      printable.map((c) => `\\${c}`),
    );
    const quoted = fc
      .array(qcontent, { maxLength: 20 })
      .map((parts) => `"${parts.join('')}"`)
      .filter((q) => Buffer.byteLength(q) <= 64);
    fc.assert(
      fc.property(quoted, asciiDomain, (local, domain) => {
        const parsed = parseAddress(`${local}@${domain}`);
        expect(parsed.ok && parsed.local).toBe(local);
      }),
    );
  });

  it('rejects a valid address with any control character inserted anywhere', () => {
    const control = fc.oneof(
      fc.constantFrom('\r', '\n', '\u0000', '\r\n'),
      fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0x7f, max: 0x9f }).map((c) => String.fromCharCode(c)),
    );
    fc.assert(
      fc.property(validAddress, control, fc.nat(), ([local, domain], c, at) => {
        const address = `${local}@${domain}`;
        const i = at % (address.length + 1);
        expect(parseAddress(address.slice(0, i) + c + address.slice(i)).ok).toBe(false);
      }),
    );
  });

  it('rejects a quoted local part carrying CR, LF or NUL', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 10 }), fc.constantFrom('\r', '\n', '\u0000'), (text, c) => {
        expect(parseAddress(`"${text}${c}"@example.com`).ok).toBe(false);
      }),
    );
  });

  it('never throws, and whatever it accepts is free of controls and within 254 octets', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (input) => {
        const parsed = parseAddress(input);
        if (parsed.ok) {
          expect(parsed.address).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
          expect(Buffer.byteLength(parsed.address)).toBeLessThanOrEqual(254);
          expect(parsed.address.trim()).toBe(parsed.address);
        } else {
          expect(parsed.error).not.toBe('');
        }
      }),
      { numRuns: 500 },
    );
  });

  it('accepts only addresses whose local part and domain are split at the right @', () => {
    fc.assert(
      fc.property(validAddress, ([local, domain]) => {
        const parsed = parseAddress(`"${local}@x"@${domain}`);
        expect(parsed.ok && parsed.local).toBe(`"${local}@x"`);
      }),
    );
  });
});

describe('parseAddress: called from JavaScript', () => {
  it('rejects a value that is not a string instead of throwing', () => {
    expect(parseAddress(undefined as unknown as string)).toEqual({
      ok: false,
      error: 'address is not a string',
    });
    expect(parseAddress(42 as unknown as string)).toEqual({ ok: false, error: 'address is not a string' });
  });
});

describe('needsSmtpUtf8', () => {
  it('is true only for a local part with non-ASCII characters', () => {
    expect(needsSmtpUtf8('jörg')).toBe(true);
    expect(needsSmtpUtf8('用户')).toBe(true);
    expect(needsSmtpUtf8('john.doe+tag')).toBe(false);
    expect(needsSmtpUtf8('"john doe"')).toBe(false);
  });
});

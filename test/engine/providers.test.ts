/**
 * The provider table (src/engine/smtp/providers.ts), row by row: every row's example MX host is
 * read back to that row's provider; suffixes match on label boundaries only; a domain's provider
 * is its most preferred MX hosts'. docs/verdicts.md shows the same rows.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROVIDER_ROWS, providerOfHost, providerOfRecords } from '../../src/engine/smtp/providers.js';
import { PROVIDERS } from '../../src/engine/types.js';

describe('the provider table', () => {
  for (const row of PROVIDER_ROWS) {
    it(`${row.example} → ${row.provider}`, () => {
      expect(row.example === row.suffix || row.example.endsWith(`.${row.suffix}`)).toBe(true);
      expect(providerOfHost(row.example)).toBe(row.provider);
      // As DNS may write it: upper case, with the root's trailing dot.
      expect(providerOfHost(`${row.example.toUpperCase()}.`)).toBe(row.provider);
    });
  }

  it('has a row for every provider and suffixes that are distinct', () => {
    for (const provider of PROVIDERS)
      expect(
        PROVIDER_ROWS.some((row) => row.provider === provider),
        provider,
      ).toBe(true);
    expect(new Set(PROVIDER_ROWS.map((row) => row.suffix)).size).toBe(PROVIDER_ROWS.length);
  });

  it('matches a suffix on label boundaries only', () => {
    for (const host of [
      'evilgoogle.com',
      'aspmx.l.evilgoogle.com',
      'google.com.attacker.example',
      'notyahoodns.net',
      'mail.protection.outlook.com.evil.test',
      'xmail.ru',
      'fakepphosted.com',
      'web.de.example.org',
      'icloud.com', // only mail.icloud.com is Apple's mail fleet
    ])
      expect(providerOfHost(host), host).toBeNull();
  });

  it('knows nothing of other mail hosts', () => {
    for (const host of ['mx.example.com', 'mail.example.org', 'localhost', '', '.', 'mx1.test'])
      expect(providerOfHost(host), host).toBeNull();
  });

  it('names a domain by its most preferred MX hosts, not by a backup', () => {
    expect(
      providerOfRecords([
        { exchange: 'mx.example.com', priority: 10 },
        { exchange: 'aspmx.l.google.com', priority: 20 },
      ]),
    ).toBeNull();
    expect(
      providerOfRecords([
        { exchange: 'mx.example.com', priority: 10 },
        { exchange: 'contoso-com.mail.protection.outlook.com', priority: 10 },
      ]),
    ).toBe('microsoft');
    expect(
      providerOfRecords([
        { exchange: 'aspmx.l.google.com', priority: 1 },
        { exchange: 'alt1.aspmx.l.google.com', priority: 5 },
      ]),
    ).toBe('google');
    expect(providerOfRecords([])).toBeNull();
    expect(providerOfRecords([{ exchange: '.', priority: 0 }])).toBeNull();
  });

  it('is the table docs/verdicts.md shows', () => {
    const doc = readFileSync('docs/verdicts.md', 'utf8');
    const section = doc.slice(doc.indexOf('## Which provider runs the mail'));
    for (const row of PROVIDER_ROWS)
      expect(section, row.suffix).toContain(
        `| \`${row.provider}\` | \`${row.suffix}\` | \`${row.example}\` |`,
      );
    const documented = section.match(/^\| `[a-z]+` \| `[^`]+` \|/gm) ?? [];
    expect(documented.length).toBe(PROVIDER_ROWS.length);
  });
});

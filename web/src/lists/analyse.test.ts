import { describe, expect, it } from 'vitest';
import { ListSession, detectColumn, looksLikeAddress, pastedToCsv } from './analyse';

const csvFile = (text: string, name = 'list.csv') => new File([text], name, { type: 'text/csv' });

describe('finding the address column', () => {
  it('takes a column named like an address, whatever its values', () => {
    expect(
      detectColumn([
        ['Name', 'E-mail', 'Work mail'],
        ['Ada', 'ada', 'ada@work.example'],
      ]),
    ).toEqual({
      column: 1,
      header: true,
    });
    expect(
      detectColumn([
        ['id', 'EMAIL_ADDRESS'],
        ['1', 'x@example.com'],
      ]),
    ).toEqual({ column: 1, header: true });
    expect(
      detectColumn([
        ['id', 'mail'],
        ['1', 'x@example.com'],
      ]),
    ).toEqual({ column: 1, header: true });
  });

  it('otherwise takes the column whose values most look like addresses', () => {
    const rows = [
      ['contact', 'backup'],
      ['a@example.com', 'b@example.com'],
      ['c@example.com', 'nobody'],
      ['d@example.com', ''],
    ];
    expect(detectColumn(rows)).toEqual({ column: 0, header: true });
  });

  it('sees no header when the first row is an address too', () => {
    expect(detectColumn([['a@example.com'], ['b@example.com']])).toEqual({ column: 0, header: false });
  });

  it('sees no header in a single row', () => {
    expect(detectColumn([['address']])).toEqual({ column: 0, header: false });
  });
});

describe('what looks like an address', () => {
  it.each(['a@example.com', ' padded@example.com ', 'o.brien+tag@mail.example.co.uk'])('%s does', (value) =>
    expect(looksLikeAddress(value)).toBe(true),
  );
  it.each(['', 'plain', 'a@b', '@example.com', 'a b@example.com', 'a@example.'])('%j does not', (value) =>
    expect(looksLikeAddress(value)).toBe(false),
  );
});

describe('a pasted list', () => {
  it('becomes one address per row, whatever separated them', () => {
    expect(pastedToCsv(' a@x.com\nb@x.com,c@x.com ;  d@x.com\t e@x.com\n\n')).toBe(
      'a@x.com\r\nb@x.com\r\nc@x.com\r\nd@x.com\r\ne@x.com',
    );
  });
});

describe('reading a list in chunks', () => {
  // Over 1 MiB, so papaparse hands it over in several chunks and the sample ends mid-chunk.
  const ROWS = 60_000;
  const big = [
    'id,email,note',
    ...Array.from({ length: ROWS }, (_, i) => {
      const address =
        i % 10 === 9 ? `user${i - 1}@Example.com` : i % 25 === 0 ? `broken-${i}` : `user${i}@example.com`;
      return `${i},${address},"note, with a comma ${i}"`;
    }),
  ].join('\n');

  it('counts every row once, with duplicates and odd values, across chunk boundaries', async () => {
    expect(big.length).toBeGreaterThan(2 * 1024 * 1024);
    const fractions: number[] = [];
    const analysis = await new ListSession({ kind: 'file', file: csvFile(big), name: 'big.csv' }).load(
      (fraction) => fractions.push(fraction),
    );
    // Rows i % 10 === 9 repeat row i - 1 (case aside), unless row i - 1 was a broken one.
    const duplicates = Array.from({ length: ROWS }, (_, i) => i).filter(
      (i) => i % 10 === 9 && (i - 1) % 25 !== 0,
    ).length;
    const broken = Array.from({ length: ROWS }, (_, i) => i).filter(
      (i) => i % 10 !== 9 && i % 25 === 0,
    ).length;
    expect(analysis).toMatchObject({
      columns: ['id', 'email', 'note'],
      choice: { column: 1, header: true },
      rows: ROWS,
      addresses: ROWS,
      empty: 0,
      invalid: broken,
      duplicates,
      delimiter: ',',
    });
    expect(analysis.preview).toHaveLength(10);
    expect(analysis.preview[0]).toEqual(['0', 'broken-0', 'note, with a comma 0']);
    expect(fractions.length).toBeGreaterThan(2);
    expect(fractions.at(-1)).toBe(1);
  });

  it('reads it again with the column and header the user chose', async () => {
    const session = new ListSession({ kind: 'file', file: csvFile(big), name: 'big.csv' });
    await session.load();
    const analysis = await session.analyse({ column: 2, header: false });
    expect(analysis).toMatchObject({ rows: ROWS + 1, addresses: ROWS + 1, invalid: ROWS + 1, duplicates: 0 });
    expect(analysis.columns).toEqual(['Column 1', 'Column 2', 'Column 3']);
  });

  it('ignores a byte-order mark and blank lines', async () => {
    const analysis = await new ListSession({
      kind: 'file',
      file: csvFile('\ufeffemail\r\n\r\na@example.com\r\n  \r\nb@example.com\r\n'),
      name: 'bom.csv',
    }).load();
    expect(analysis).toMatchObject({
      columns: ['email'],
      rows: 2,
      addresses: 2,
      choice: { column: 0, header: true },
    });
  });

  it('uploads a comma-separated file as it is, without copying it', async () => {
    const file = csvFile('email\na@example.com');
    const session = new ListSession({ kind: 'file', file, name: 'a.csv' });
    await session.load();
    expect(await session.body()).toBe(file);
  });
});

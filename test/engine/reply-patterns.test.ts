/**
 * The reply-pattern table (src/engine/smtp/reply-patterns.ts), row by row: every row's example,
 * a reply as its vendor writes it, must be read by that very row and classified to the outcome
 * its meaning gives; and the rule that "could not find out" is never "does not exist" holds for
 * any 4xx and any text about the prober. docs/verdicts.md shows the same rows.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReplyVerdict } from '../../src/engine/smtp/classify.js';
import { classifyReply } from '../../src/engine/smtp/classify.js';
import type { SmtpReply } from '../../src/engine/smtp/reply.js';
import { ReplyParser, enhancedCodeOf } from '../../src/engine/smtp/reply.js';
import type { ReplyMeaning, ReplyPattern } from '../../src/engine/smtp/reply-patterns.js';
import {
  REPLY_FAMILIES,
  REPLY_MEANINGS,
  REPLY_PATTERNS,
  findReplyPattern,
  patternText,
} from '../../src/engine/smtp/reply-patterns.js';

function parse(raw: string): SmtpReply {
  const [reply] = new ReplyParser().push(`${raw}\r\n`);
  if (!reply) throw new Error(`incomplete reply: ${raw}`);
  return reply;
}

/** What each meaning becomes at RCPT, by reply class: the specification, written out again. */
const OUTCOME: Record<ReplyMeaning, { 4: ReplyVerdict; 5: ReplyVerdict }> = {
  no_mailbox: { 4: 'greylisted', 5: 'rejected' },
  mailbox_full: { 4: 'mailbox_full', 5: 'mailbox_full' },
  policy: { 4: 'blocked', 5: 'blocked' },
  unclear: { 4: 'blocked', 5: 'blocked' },
  try_later: { 4: 'greylisted', 5: 'blocked' },
};

const classOf = (reply: SmtpReply): 4 | 5 => (reply.code >= 500 ? 5 : 4);
const rowName = (row: ReplyPattern): string => `${row.family}: ${row.example.split('\r\n')[0]!.slice(0, 70)}`;

describe('the reply-pattern table', () => {
  for (const row of REPLY_PATTERNS) {
    it(`${rowName(row)} → ${row.means}`, () => {
      const reply = parse(row.example);
      const found = findReplyPattern(patternText(reply.message), enhancedCodeOf(reply));
      expect(found, 'the example is read by its own row, not an earlier one').toBe(row);
      expect(classifyReply('rcpt', reply)).toBe(OUTCOME[row.means][classOf(reply)]);
    });
  }

  it('has at least 40 rows, and rows from every family named', () => {
    expect(REPLY_PATTERNS.length).toBeGreaterThanOrEqual(40);
    for (const family of REPLY_FAMILIES) {
      expect(REPLY_PATTERNS.filter((row) => row.family === family).length, family).toBeGreaterThanOrEqual(
        family === 'any server' ? 1 : 2,
      );
    }
  });

  it('has a 4xx or 5xx example per row, each different, and patterns that keep no state', () => {
    expect(new Set(REPLY_PATTERNS.map((row) => row.example)).size).toBe(REPLY_PATTERNS.length);
    for (const row of REPLY_PATTERNS) {
      expect(row.example, rowName(row)).toMatch(/^[45]\d\d[ -]/);
      // A global or sticky expression remembers lastIndex between tests: every other reply would miss.
      expect(row.text.flags, rowName(row)).not.toMatch(/[gy]/);
      expect(row.source.length, rowName(row)).toBeGreaterThan(0);
    }
  });

  it('puts every row about the prober before every row about the mailbox', () => {
    const aboutProber = (row: ReplyPattern) => row.means === 'policy' || row.means === 'unclear';
    const lastProberRow = REPLY_PATTERNS.findLastIndex(aboutProber);
    const firstMailboxRow = REPLY_PATTERNS.findIndex((row) => !aboutProber(row) && row.means !== 'try_later');
    expect(lastProberRow).toBeLessThan(firstMailboxRow);
  });
});

describe('"could not find out" is never "does not exist"', () => {
  const texts = REPLY_PATTERNS.map((row) => parse(row.example).message);
  const anyText = fc.oneof(fc.constantFrom(...texts), fc.string({ maxLength: 80 }));
  const enhancedCode = (digit: 4 | 5) =>
    fc.option(
      fc
        .tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 12 }))
        .map(([s, d]) => `${digit}.${s}.${d}`),
      { nil: null },
    );
  const reply = (code: number, enhanced: string | null, text: string): SmtpReply =>
    parse(`${code} ${enhanced === null ? '' : `${enhanced} `}${text.replace(/[\r\n]/g, ' ')}`);

  it('no 4xx reply is ever a missing mailbox, whatever its text and enhanced code', () => {
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 499 }), enhancedCode(4), anyText, (code, enhanced, text) => {
        const verdict = classifyReply('rcpt', reply(code, enhanced, text));
        expect(verdict).not.toBe('rejected');
      }),
      { numRuns: 2000 },
    );
  });

  it('no reply whose text is about the prober is a missing mailbox, even with 5.1.1 or a mailbox text', () => {
    // Phrases of rows that need no particular code, taken from their own examples.
    const aboutProber = REPLY_PATTERNS.filter(
      (row) => (row.means === 'policy' || row.means === 'unclear') && row.code === undefined,
    ).map((row) => parse(row.example).message);
    fc.assert(
      fc.property(
        fc.integer({ min: 500, max: 599 }),
        fc.option(fc.constantFrom('5.1.1', '5.1.0', '5.2.1', '5.0.0', '5.5.0'), { nil: null }),
        fc.constantFrom(...texts),
        fc.constantFrom(...aboutProber),
        fc.boolean(),
        (code, enhanced, text, prober, proberFirst) => {
          const combined = proberFirst ? `${prober} ${text}` : `${text} ${prober}`;
          expect(classifyReply('rcpt', reply(code, enhanced, combined))).not.toBe('rejected');
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('a bare 550, 553 or 554 whose text says nothing the table knows stays unknown', () => {
    // Words of real refusals that, alone, say nothing about who or what was refused.
    const neutral = fc.constantFrom(
      'requested',
      'action',
      'not',
      'taken',
      'rejected',
      'refused',
      'message',
      'transaction',
      'failed',
      'sorry',
      'error',
      'permanent',
      'delivery',
      'here',
      'request',
      'command',
      'denied',
      'please',
      'contact',
      'administrator',
    );
    fc.assert(
      fc.property(
        fc.constantFrom(550, 553, 554),
        fc.array(neutral, { minLength: 1, maxLength: 8 }),
        (code, words) => {
          expect(classifyReply('rcpt', reply(code, null, words.join(' ')))).toBe('blocked');
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('docs/verdicts.md, "How replies are read"', () => {
  const doc = readFileSync(new URL('../../docs/verdicts.md', import.meta.url), 'utf8');
  const start = doc.indexOf('\n## How replies are read\n');
  const end = doc.indexOf('\n## ', start + 1);
  const section = start === -1 ? '' : doc.slice(start, end === -1 ? undefined : end);

  /** Every table of the section, as rows of trimmed cells, header and separator dropped. */
  function tables(): string[][][] {
    const found: string[][] = [];
    let previousWasRow = false;
    for (const line of section.split('\n')) {
      const isRow = line.startsWith('|');
      if (isRow && !previousWasRow) found.push([]);
      if (isRow) found[found.length - 1]!.push(line);
      previousWasRow = isRow;
    }
    return found.map((table) =>
      table.slice(2).map((line) =>
        line
          .slice(1, -1)
          .split('|')
          .map((cell) => cell.trim()),
      ),
    );
  }

  const codeCell = (row: ReplyPattern): string => {
    if (row.code === undefined) return 'any';
    if (row.code === null) return 'none';
    return row.code.split('.').length < 3 ? `${row.code}.x` : row.code;
  };

  it('exists', () => {
    expect(start, 'docs/verdicts.md has a "## How replies are read" section').toBeGreaterThan(-1);
  });

  it('states what each meaning becomes at a 4xx and at a 5xx', () => {
    const outcome = (verdict: ReplyVerdict): string =>
      `\`${verdict === 'rejected' ? 'smtp_rejected' : verdict === 'blocked' ? 'smtp_blocked' : verdict}\``;
    const documented = tables()[0] ?? [];
    expect(documented).toEqual(
      REPLY_MEANINGS.map((meaning) => [
        `\`${meaning}\``,
        outcome(OUTCOME[meaning][4]),
        outcome(OUTCOME[meaning][5]),
      ]),
    );
  });

  it('lists exactly the rows of src/engine/smtp/reply-patterns.ts, in their order', () => {
    const documented = tables()[1] ?? [];
    const expected = REPLY_PATTERNS.map((row, i) => [
      String(i + 1),
      row.family,
      `\`${row.example.replace(/\r\n/g, ' ')}\``,
      codeCell(row),
      `\`${row.means}\``,
      row.source,
    ]);
    // On a mismatch, the expected rows are the table to paste (cells joined with " | ").
    expect(documented.map((cells) => `| ${cells.join(' | ')} |`).join('\n')).toBe(
      expected.map((cells) => `| ${cells.join(' | ')} |`).join('\n'),
    );
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REASONS, STATUSES } from '../../src/engine/types.js';
import { BASE_SCORES, FLAG_PENALTIES, SCORE_BANDS } from '../../src/engine/verdict.js';

const doc = readFileSync(new URL('../../docs/verdicts.md', import.meta.url), 'utf8');

/** The rows of the first table under the `## title` heading, as arrays of trimmed cells. */
function tableUnder(title: string, nth = 0): string[][] {
  const start = doc.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`docs/verdicts.md has no "## ${title}" section`);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  const tables: string[][] = [];
  let previousWasRow = false;
  for (const line of section.split('\n')) {
    const isRow = line.startsWith('|');
    if (isRow && !previousWasRow) tables.push([]);
    if (isRow) tables[tables.length - 1]?.push(line);
    previousWasRow = isRow;
  }
  const table = tables[nth];
  if (table === undefined) throw new Error(`"## ${title}" has no table #${nth}`);
  return table
    .slice(2) // header and separator
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

const code = (cell: string | undefined): string => /^`([a-z_]+)`$/.exec(cell ?? '')?.[1] ?? '';

describe('docs/verdicts.md', () => {
  const reasonRows = tableUnder('Reasons');

  it('documents exactly the reasons the engine can return, each once', () => {
    const documented = reasonRows.map((row) => code(row[0]));
    expect([...documented].sort()).toEqual([...REASONS].sort());
  });

  it('gives each reason the status and score range the engine gives it', () => {
    for (const [reasonCell, status, range] of reasonRows) {
      const reason = code(reasonCell) as (typeof REASONS)[number];
      const expectedStatus = STATUSES.find((s) => s === status);
      expect(expectedStatus, `status of ${reason}`).toBeDefined();
      const penalty = FLAG_PENALTIES[expectedStatus!];
      const base = BASE_SCORES[reason];
      expect(range, `score range of ${reason}`).toBe(`${base - penalty.role - penalty.free}-${base}`);
    }
  });

  it('states the score bands the engine uses', () => {
    const bands = Object.fromEntries(tableUnder('Scores', 0).map(([s, band]) => [code(s), band]));
    expect(bands).toEqual(
      Object.fromEntries(STATUSES.map((s) => [s, `${SCORE_BANDS[s].min}-${SCORE_BANDS[s].max}`])),
    );
  });

  it('states the base score of every reason and of deliverable', () => {
    const rows = tableUnder('Scores', 1);
    const documented = Object.fromEntries(
      rows.map(([r, score]) => [r?.startsWith('deliverable') ? 'deliverable' : code(r), Number(score)]),
    );
    expect(documented).toEqual({ ...BASE_SCORES });
  });

  it('states the flag penalties of every status', () => {
    const rows = tableUnder('Scores', 2);
    const documented = Object.fromEntries(
      rows.map(([s, role, free]) => [code(s), { role: 0 - Number(role), free: 0 - Number(free) }]),
    );
    expect(documented).toEqual({ ...FLAG_PENALTIES });
  });
});

/**
 * The error-code registry and the API reference agree: every code in src/errors.ts has a row in
 * docs/api.md's error table with the status the API layer maps it to, and the table has no code
 * the service cannot return.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HTTP_STATUS } from '../../src/http/errors.js';
import { ERROR_CODES } from '../../src/errors.js';

function documentedCodes(): Map<string, number> {
  const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const rows = new Map<string, number>();
  for (const m of doc.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)) rows.set(m[2]!, Number(m[1]));
  return rows;
}

describe('error codes in docs/api.md', () => {
  it('documents every code of the registry with the status the API answers', () => {
    const documented = documentedCodes();
    for (const code of ERROR_CODES) expect([code, documented.get(code)]).toEqual([code, HTTP_STATUS[code]]);
  });

  it('documents no code the registry does not have', () => {
    expect([...documentedCodes().keys()].sort()).toEqual([...ERROR_CODES].sort());
  });
});

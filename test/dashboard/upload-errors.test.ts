/**
 * Issue 16, defect 5: an upload refused part-way answers its documented 422, wherever in the
 * stream the refusal comes. Near the start of a large file the reading stopped while the body was
 * still streaming, and the AbortError of tearing the streams down answered 500 instead.
 */
import { afterEach, expect, it } from 'vitest';
import { API, createDashboardHarness, errorCode, type DashboardHarness } from '../kit/dashboard-kit.js';

let h: DashboardHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** 200,000 ordinary rows after `first`: far more than one read of the body. */
const fileStartingWith = (first: string): string =>
  [
    'name,email',
    first,
    ...Array.from({ length: 200_000 }, (_, i) => `n${i},user${i}@valid.example.com`),
  ].join('\r\n');

it.each([
  [
    'an over-long address in the first rows',
    `x,${'a'.repeat(400)}@example.com`,
    /row 2: the address cell is longer/,
  ],
  [
    '1,001 columns followed by more rows',
    Array.from({ length: 1001 }, (_, i) => `c${i}`).join(','),
    /row 2 has 1001 columns/,
  ],
])(
  'answers 422 invalid_request for %s, and keeps no job',
  async (_, first, message) => {
    h = await createDashboardHarness();
    const { browser } = await h.signedIn();
    const res = await browser.request(
      'POST',
      `${API}/lists?name=big.csv&email_column=1&header=true&mode=test`,
      {
        raw: { type: 'text/csv', payload: fileStartingWith(first) },
      },
    );
    expect(res.statusCode).toBe(422);
    expect(errorCode(res)).toBe('invalid_request');
    expect(res.json<{ message: string }>().message).toMatch(message);
    const { db } = h.runtime.ctx;
    expect(await db.selectFrom('jobs').select('id').execute()).toEqual([]);
    expect(await db.selectFrom('list_uploads').select('id').execute()).toEqual([]);
    expect(await db.selectFrom('list_upload_rows').select('seq').execute()).toEqual([]);
  },
  60_000,
);

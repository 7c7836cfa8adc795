/**
 * The Outcomes page end to end (issue 27): addresses verified with the live key through the real
 * v1 API (`serve` on the kit's DNS server, where they do not exist), a CSV of bounces uploaded in
 * the page, what came in shown by source, and the accuracy report with the verdicts' bounce rate
 * and its reliability diagram. Real Chromium, real sockets, the built app.
 */
import { describe, expect, it } from 'vitest';
import {
  acceptInvitation,
  callApi,
  describeViolations,
  NXDOMAIN,
  seriousViolations,
  signIn,
  skipE2e,
} from '../kit/e2e.js';
import { useE2eSuite } from '../kit/e2e-suite.js';

describe.skipIf(skipE2e)('dashboard end to end: outcomes', { timeout: 60_000 }, () => {
  const e2e = useE2eSuite((d) => acceptInvitation(d, d.ownerInvitationLink));

  it('a CSV of bounces uploaded in the page shows in what came in and in the accuracy report', async () => {
    const { dashboard } = e2e;
    for (const email of [`ann@${NXDOMAIN}`, `bob@${NXDOMAIN}`]) {
      const res = await callApi(`${dashboard.url}/v1/verify`, dashboard.liveKey, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { reason: string }).reason).toBe('domain_not_found');
    }
    // After the verifications (serve's clock is the real one): the bounce is evidence about them.
    const at = new Date(Date.now() + 1000).toISOString();
    const context = await e2e.context();
    await signIn(context, dashboard.ownerEmail);
    const page = await context.newPage();
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Outcomes' }).click();
    await page.getByRole('heading', { name: 'Outcomes', level: 1 }).waitFor();

    await page.getByLabel('Choose a file').setInputFiles({
      name: 'bounces.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(
        `email,type,at\nann@${NXDOMAIN},hard_bounce,${at}\nnot-an-address,delivered,${at}\n`,
      ),
    });
    await page.getByRole('button', { name: 'Upload' }).click();
    const status = page.getByRole('status').filter({ hasText: 'taken' });
    await expect.poll(() => status.textContent()).toContain('1 event taken, 1 refused:');
    expect(await status.textContent()).toContain('Row 3:');

    const bySource = page.getByRole('table', { name: 'By source' });
    await bySource.waitFor();
    const upload = bySource.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Upload' }) });
    expect(await upload.getByRole('cell').allTextContents()).toEqual([
      '1',
      '0',
      '1',
      '0',
      '0',
      '0',
      '0',
      '0',
    ]);

    const byVerdict = page.getByRole('table', { name: 'By verdict' });
    await byVerdict.waitFor();
    const row = byVerdict.getByRole('row').filter({ hasText: 'domain_not_found' });
    expect(await row.getByRole('cell').allTextContents()).toEqual([
      'domain_not_found',
      '2',
      '1',
      '0',
      '1',
      '100%',
    ]);
    const diagram = page.getByRole('img', { name: /Reliability diagram/ });
    expect(await diagram.getAttribute('aria-labelledby')).toBeTruthy();
    expect(
      await page.getByRole('img', { name: /Scores 0 to 9: predicted 2%, observed 0% of 1\./ }).count(),
    ).toBe(1);

    const violations = await seriousViolations(page);
    expect(violations, describeViolations('the Outcomes page', violations)).toEqual([]);
  });
});

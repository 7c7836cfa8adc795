import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WIDGET_BUDGET_BYTES, WIDGET_FILE, checkWidget } from '../scripts/check-widget.js';

const built = existsSync(WIDGET_FILE);
if (!built)
  console.log('widget budget: dist/widget is not built (npm run build), the widget is not measured');

describe.runIf(built)('the widget as built (dist/widget/widget.js)', () => {
  it('is at most 12 KB gzipped', () => {
    const report = checkWidget();
    console.log(`widget budget: ${(report.gzipBytes / 1024).toFixed(2)} KB gzipped`);
    expect(report.gzipBytes).toBeGreaterThan(0);
    expect(report.gzipBytes).toBeLessThanOrEqual(WIDGET_BUDGET_BYTES);
  });

  it('names no host: it asks only the server it was loaded from', () => {
    expect(checkWidget().urls).toEqual([]);
  });
});

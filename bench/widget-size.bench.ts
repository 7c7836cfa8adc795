/**
 * `npm run bench:widget`: the size of the built widget (dist/widget/widget.js; `npm run build`
 * first), raw and gzipped, against its 12 KB budget. A size, not a timing: it does not vary by run.
 */
import { checkWidget, WIDGET_BUDGET_BYTES, WIDGET_FILE } from '../scripts/check-widget.js';

const report = checkWidget();
const kb = (n: number) => `${(n / 1024).toFixed(2)} KB`;
console.log(`widget: ${WIDGET_FILE}`);
console.log(`  raw      ${report.bytes} B (${kb(report.bytes)})`);
console.log(
  `  gzip -9  ${report.gzipBytes} B (${kb(report.gzipBytes)}), ${((100 * report.gzipBytes) / WIDGET_BUDGET_BYTES).toFixed(0)}% of the ${kb(WIDGET_BUDGET_BYTES)} budget`,
);
if (report.urls.length > 0) console.log(`  URLs in the file: ${report.urls.join(' ')}`);

/**
 * A list's download: the verdicts to keep (checkboxes, and the one-click "safe to send" presets),
 * what to do with suggested addresses, and the file as CSV or XLSX (GET /jobs/:id/download).
 *
 * Accessible names: group "Rows to download" with checkboxes Deliverable, Risky, Undeliverable,
 * Unknown; group "Safe to send" with buttons "Deliverable only", "Deliverable and risky"; radio
 * group "Suggested addresses"; links "Download CSV", "Download XLSX".
 */
import { useState } from 'react';
import { VERDICTS, XLSX_MAX_ROWS, type DownloadQuery, type JobDetail, type Status } from '../api/contract';
import { useEndpoints } from '../api/endpoints';
import { isActive } from '../api/queries';
import { Choice } from '../components/choice';
import { formatDateTime, plural } from '../components/format';
import { VERDICT_LABEL } from '../components/verdict';

type Corrected = NonNullable<DownloadQuery['corrected']> | 'none';

/** The one-click verdict choices: the rows one can send to. */
export const SAFE_PRESETS: { label: string; verdicts: Status[] }[] = [
  { label: 'Deliverable only', verdicts: ['deliverable'] },
  { label: 'Deliverable and risky', verdicts: ['deliverable', 'risky'] },
];

const CORRECTED: { value: Corrected; label: string; hint: string }[] = [
  {
    value: 'none',
    label: 'Only in did_you_mean',
    hint: 'The addresses stay as uploaded.',
  },
  { value: 'beside', label: 'Beside the address', hint: 'A corrected_email column after the address.' },
  {
    value: 'replace',
    label: 'In place of the address',
    hint: 'The verdict stays the one of the address as uploaded.',
  },
];

/** The download's query: no verdicts when every verdict is wanted (all rows). */
export function downloadQuery(
  chosen: readonly Status[],
  options: { format?: 'csv' | 'xlsx'; corrected?: Corrected } = {},
): DownloadQuery {
  const query: DownloadQuery = {};
  if (chosen.length !== VERDICTS.length)
    query.verdicts = VERDICTS.filter((v) => chosen.includes(v)).join(',');
  if (options.corrected !== undefined && options.corrected !== 'none') query.corrected = options.corrected;
  if (options.format === 'xlsx') query.format = 'xlsx';
  return query;
}

export function ListDownload({ detail }: { detail: JobDetail }) {
  const api = useEndpoints();
  const [chosen, setChosen] = useState<Status[]>([...VERDICTS]);
  const [corrected, setCorrected] = useState<Corrected>('none');
  const { job, counts } = detail;
  if (!job.downloadable) {
    return (
      <p className="muted">
        {isActive(job)
          ? 'The results can be downloaded once the job is done.'
          : `The results are no longer available (they were kept until ${formatDateTime(job.results_expire_at)}).`}
      </p>
    );
  }
  const rows = chosen.reduce((sum, verdict) => sum + (counts?.by_status[verdict] ?? 0), 0);
  const rowsText = <span className="sr-only"> ({counts ? plural(rows, 'row') : 'chosen rows'})</span>;
  const href = (format: 'csv' | 'xlsx') =>
    api.downloadUrl(job.job_id, downloadQuery(chosen, { format, corrected }));
  return (
    <div className="download">
      <div role="group" aria-labelledby="safe-title" className="preset-row">
        <span id="safe-title" className="preset-title">
          Safe to send
        </span>
        {SAFE_PRESETS.map((preset) => (
          <button
            key={preset.label}
            type="button"
            className="button"
            aria-pressed={
              chosen.length === preset.verdicts.length && preset.verdicts.every((v) => chosen.includes(v))
            }
            onClick={() => setChosen([...preset.verdicts])}
          >
            {preset.label}
          </button>
        ))}
      </div>
      <fieldset className="fieldset">
        <legend>Rows to download</legend>
        {VERDICTS.map((verdict) => (
          <Choice
            key={verdict}
            inline
            type="checkbox"
            label={
              <>
                {VERDICT_LABEL[verdict]}
                {counts ? <span className="muted small"> ({counts.by_status[verdict] ?? 0})</span> : null}
              </>
            }
            checked={chosen.includes(verdict)}
            onChange={(on) =>
              setChosen((current) =>
                on ? [...current, verdict] : current.filter((item) => item !== verdict),
              )
            }
          />
        ))}
      </fieldset>
      <fieldset className="fieldset">
        <legend>Suggested addresses</legend>
        {CORRECTED.map((option) => (
          <Choice
            key={option.value}
            type="radio"
            name="corrected"
            label={option.label}
            hint={option.hint}
            checked={corrected === option.value}
            onChange={(on) => on && setCorrected(option.value)}
          />
        ))}
      </fieldset>
      <p className="hint">
        {job.has_original_columns
          ? 'The file keeps your original columns, followed by status, score, reason, did_you_mean and provider.'
          : 'The file has the address followed by status, score, reason, did_you_mean and provider.'}{' '}
        {job.total > XLSX_MAX_ROWS
          ? `Lists of more than ${XLSX_MAX_ROWS.toLocaleString('en')} rows download as CSV only. `
          : ''}
        Results are kept until {formatDateTime(job.results_expire_at)}.
      </p>
      {chosen.length === 0 ? (
        <p className="notice notice-info">Choose at least one verdict to download.</p>
      ) : (
        <div className="form-actions">
          <a className="button button-primary" href={href('csv')} download>
            Download CSV
            {rowsText}
          </a>
          {job.total <= XLSX_MAX_ROWS ? (
            <a className="button" href={href('xlsx')} download>
              Download XLSX
              {rowsText}
            </a>
          ) : null}
        </div>
      )}
    </div>
  );
}

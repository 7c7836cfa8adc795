/**
 * Uploading a list: drop a file, pick one (CSV, TXT, XLSX) or paste addresses; the list is read in
 * a worker, its address column detected (and changeable), its first rows previewed with the row
 * count, duplicates, odd-looking cells and the quota it will use; then it is sent as CSV to
 * POST /lists as a live or test job.
 *
 * Accessible names: heading "Upload a list"; file group "Drop a CSV, TXT or XLSX file here" (the drop zone) with file field "Choose a file"; text box "Or paste
 * addresses" and button "Use these addresses"; progress bar "Reading the list"; select "Column
 * with the e-mail addresses"; checkbox "The first row holds column names"; table "Preview";
 * field "List name"; radios "Live" and "Test"; button "Start verification" (or "Start test job");
 * button "Choose another list".
 */
import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import type { Usage } from '../api/contract';
import { keys, useInvalidate, useOverview } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { useServices } from '../api/services';
import {
  MAX_ADDRESSES,
  MAX_UPLOAD_BYTES,
  type ColumnChoice,
  type ListAnalysis,
  type ListSource,
} from '../lists/list-types';
import type { ListParser } from '../lists/parser';
import { Choice } from '../components/choice';
import { formatNumber, plural } from '../components/format';
import { ErrorMessage } from '../components/status';
import { TableScroll } from '../components/table-scroll';

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const MiB = 1024 * 1024;

/** What a chosen file is read as, or why it cannot be. */
export function sourceOf(file: File): ListSource | string {
  const name = file.name.toLowerCase();
  if (name.endsWith('.xlsx') || file.type === XLSX_TYPE) return { kind: 'xlsx', file, name: file.name };
  if (name.endsWith('.xls')) return 'Old Excel files (.xls) cannot be read: save the sheet as .xlsx or .csv.';
  if (file.size > MAX_UPLOAD_BYTES) {
    return `The file is ${formatNumber(Math.ceil(file.size / MiB))} MiB; a list can be at most 150 MiB.`;
  }
  if (/\.(csv|txt|tsv)$/.test(name) || file.type.startsWith('text/') || file.type === '') {
    return { kind: 'file', file, name: file.name };
  }
  return 'Choose a CSV, TXT or XLSX file.';
}

const baseName = (name: string) => name.replace(/\.[^.]+$/, '') || name;

/** What stops this list from being sent, in words, or null. */
export function blockingProblem(
  analysis: ListAnalysis,
  mode: 'live' | 'test',
  usage: Usage | undefined,
): string | null {
  if (analysis.addresses === analysis.invalid) {
    return 'No e-mail addresses found in that column. Choose the column that holds them.';
  }
  // Every row is a row of the job (one without an address comes back as invalid), so rows count.
  if (analysis.rows > MAX_ADDRESSES) {
    return `This list has ${formatNumber(analysis.rows)} rows; a list can have at most ${formatNumber(MAX_ADDRESSES)}. Split it into smaller files.`;
  }
  if (
    mode === 'live' &&
    usage &&
    usage.quota.remaining !== null &&
    !usage.overage.enabled &&
    analysis.rows > usage.quota.remaining
  ) {
    return `This list needs ${plural(analysis.rows, 'verification')} but ${formatNumber(usage.quota.remaining)} remain this period, and your plan has no overage. Submit a smaller list, use test mode, or wait for the quota to reset.`;
  }
  return null;
}

function QuotaLine({
  analysis,
  mode,
  usage,
}: {
  analysis: ListAnalysis;
  mode: 'live' | 'test';
  usage?: Usage;
}) {
  if (mode === 'test') return <>Test mode: nothing is counted against the quota.</>;
  if (!usage) return <>Uses {plural(analysis.rows, 'verification')} of the quota.</>;
  if (usage.quota.remaining === null)
    return <>Uses {plural(analysis.rows, 'verification')}; this account has no monthly quota.</>;
  const beyond = analysis.rows - usage.quota.remaining;
  return (
    <>
      Uses {plural(analysis.rows, 'verification')} of the {formatNumber(usage.quota.remaining)} remaining this
      period.
      {beyond > 0 && usage.overage.enabled
        ? ` ${plural(beyond, 'verification')} will be billed as overage (${usage.overage.rate_per_verification} each).`
        : ''}
    </>
  );
}

function Stats({ analysis, mode, usage }: { analysis: ListAnalysis; mode: 'live' | 'test'; usage?: Usage }) {
  return (
    <dl className="stats" aria-label="List summary">
      <div>
        <dt>Rows</dt>
        <dd>{formatNumber(analysis.rows)}</dd>
      </div>
      <div>
        <dt>Addresses</dt>
        <dd>{formatNumber(analysis.addresses)}</dd>
      </div>
      <div>
        <dt>Duplicates</dt>
        <dd>{formatNumber(analysis.duplicates)}</dd>
      </div>
      <div>
        <dt>Look invalid</dt>
        <dd>{formatNumber(analysis.invalid)}</dd>
      </div>
      <div>
        <dt>Without an address</dt>
        <dd>{formatNumber(analysis.empty)}</dd>
      </div>
      <div className="stats-wide">
        <dt>Quota</dt>
        <dd>
          <QuotaLine analysis={analysis} mode={mode} usage={usage} />
        </dd>
      </div>
    </dl>
  );
}

function Preview({ analysis }: { analysis: ListAnalysis }) {
  const { columns, preview, choice } = analysis;
  return (
    <TableScroll label="Preview">
      <table className="table table-compact">
        <caption className="table-caption">Preview (first {preview.length} rows)</caption>
        <thead>
          <tr>
            {columns.map((column, index) => (
              <th key={index} scope="col" className={index === choice.column ? 'col-chosen' : undefined}>
                {column}
                {index === choice.column ? <span className="small"> (addresses)</span> : null}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {preview.map((row, rowIndex) => (
            <tr key={rowIndex}>
              {columns.map((_, index) => (
                <td key={index} className={index === choice.column ? 'col-chosen mono' : undefined}>
                  {row[index] ?? ''}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

type Stage =
  | { step: 'choose' }
  | { step: 'reading'; label: string; fraction: number }
  | { step: 'ready'; label: string; analysis: ListAnalysis }
  | { step: 'failed'; message: string };

export function UploadList() {
  const { listParser } = useServices();
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [, navigate] = useLocation();
  const usage = useOverview().data?.usage;
  const parser = useRef<ListParser | null>(null);
  const [stage, setStage] = useState<Stage>({ step: 'choose' });
  const [pasted, setPasted] = useState('');
  const [name, setName] = useState('');
  const [mode, setMode] = useState<'live' | 'test'>('live');
  const [dragging, setDragging] = useState(false);

  useEffect(() => () => parser.current?.dispose(), []);

  const reset = () => {
    parser.current?.dispose();
    parser.current = null;
    setStage({ step: 'choose' });
    upload.reset();
  };

  const read = (source: ListSource, label: string) => {
    parser.current?.dispose();
    const current = listParser(source);
    parser.current = current;
    setName(
      source.kind === 'paste' ? `Pasted list ${new Date().toISOString().slice(0, 10)}` : baseName(label),
    );
    setStage({ step: 'reading', label, fraction: 0 });
    current
      .load((fraction) => {
        if (parser.current === current) setStage({ step: 'reading', label, fraction });
      })
      .then(
        (analysis) => {
          if (parser.current === current) setStage({ step: 'ready', label, analysis });
        },
        (error: unknown) => {
          if (parser.current !== current) return;
          setStage({
            step: 'failed',
            message: `Could not read ${label}: ${error instanceof Error ? error.message : String(error)}`,
          });
        },
      );
  };

  const choose = (file: File | undefined) => {
    if (!file) return;
    const source = sourceOf(file);
    if (typeof source === 'string') setStage({ step: 'failed', message: source });
    else read(source, file.name);
  };

  const rechoose = (choice: ColumnChoice) => {
    const current = parser.current;
    if (!current || stage.step !== 'ready') return;
    const { label } = stage;
    setStage({ step: 'reading', label, fraction: 0 });
    current
      .analyse(choice, (fraction) => {
        if (parser.current === current) setStage({ step: 'reading', label, fraction });
      })
      .then(
        (analysis) => {
          if (parser.current === current) setStage({ step: 'ready', label, analysis });
        },
        (error: unknown) =>
          setStage({ step: 'failed', message: `Could not read ${label}: ${String(error)}` }),
      );
  };

  const upload = useMutation({
    mutationFn: async ({ analysis }: { analysis: ListAnalysis }) => {
      const current = parser.current;
      if (!current) throw new Error('no list is loaded');
      const body = await current.body();
      if (body.size > MAX_UPLOAD_BYTES) {
        throw new Error(
          `the list is ${formatNumber(Math.ceil(body.size / MiB))} MiB as CSV; at most 150 MiB is accepted`,
        );
      }
      return api.uploadList(
        { name: name.trim(), email_column: analysis.choice.column, header: analysis.choice.header, mode },
        body,
      );
    },
    onSuccess: (job) => {
      // Not awaited: the job's page need not wait for the lists and the overview to be fetched
      // again, which is slow while an embedded worker starts on a large job.
      void invalidate(keys.jobs, keys.overview);
      reset();
      navigate(`/lists/${encodeURIComponent(job.job_id)}`);
    },
  });

  const drop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    choose(event.dataTransfer.files[0]);
  };

  if (stage.step === 'reading') {
    return (
      <div className="upload-reading">
        <p>Reading {stage.label}…</p>
        <progress value={stage.fraction} max={1} aria-label="Reading the list" />
        <button type="button" className="button" onClick={reset}>
          Cancel
        </button>
      </div>
    );
  }

  if (stage.step === 'ready') {
    const { analysis } = stage;
    const problem = blockingProblem(analysis, mode, usage);
    const submit = (event: FormEvent) => {
      event.preventDefault();
      if (!problem && name.trim() !== '') upload.mutate({ analysis });
    };
    return (
      <form className="form upload-ready" onSubmit={submit} aria-label="Check the list">
        <p>
          <strong>{stage.label}</strong>
        </p>
        <div className="form-row">
          <div className="field">
            <label htmlFor="upload-column">Column with the e-mail addresses</label>
            <select
              id="upload-column"
              className="input"
              value={analysis.choice.column}
              onChange={(event) => rechoose({ ...analysis.choice, column: Number(event.target.value) })}
            >
              {analysis.columns.map((column, index) => (
                <option key={index} value={index}>
                  {column === `Column ${index + 1}` ? column : `Column ${index + 1}: ${column}`}
                  {index === analysis.detected.column ? ' (detected)' : ''}
                </option>
              ))}
            </select>
          </div>
          <Choice
            inline
            type="checkbox"
            label="The first row holds column names"
            checked={analysis.choice.header}
            onChange={(header) => rechoose({ ...analysis.choice, header })}
          />
        </div>
        <Stats analysis={analysis} mode={mode} usage={usage} />
        {analysis.duplicates > 0 ? (
          <p className="hint">
            {mode === 'test'
              ? 'An address that appears more than once gets the same answer on every copy.'
              : 'An address that appears more than once is verified once, and every copy gets its answer; each copy still counts against the quota.'}
          </p>
        ) : null}
        <Preview analysis={analysis} />
        <div className="form-row">
          <div className="field">
            <label htmlFor="upload-name">List name</label>
            <input
              id="upload-name"
              className="input"
              maxLength={255}
              required
              value={name}
              onChange={(event) => setName(event.target.value)}
            />
          </div>
          <fieldset className="fieldset">
            <legend>Mode</legend>
            <Choice
              inline
              type="radio"
              name="upload-mode"
              label="Live"
              hint="real verifications"
              checked={mode === 'live'}
              onChange={() => setMode('live')}
            />
            <Choice
              inline
              type="radio"
              name="upload-mode"
              label="Test"
              hint="fixed results, not counted"
              checked={mode === 'test'}
              onChange={() => setMode('test')}
            />
          </fieldset>
        </div>
        {problem ? (
          <p className="notice notice-warn" role="alert">
            {problem}
          </p>
        ) : null}
        <ErrorMessage action="Could not submit the list" error={upload.error} />
        <div className="form-actions">
          <button type="button" className="button" onClick={reset} disabled={upload.isPending}>
            Choose another list
          </button>
          <button
            type="submit"
            className="button button-primary"
            disabled={problem !== null || name.trim() === '' || upload.isPending}
          >
            {upload.isPending ? 'Uploading…' : mode === 'live' ? 'Start verification' : 'Start test job'}
          </button>
        </div>
      </form>
    );
  }

  return (
    <div className="upload-choose">
      <div
        role="group"
        aria-labelledby="dropzone-title"
        className={dragging ? 'dropzone dropzone-active' : 'dropzone'}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={drop}
      >
        <p id="dropzone-title" className="dropzone-title">
          Drop a CSV, TXT or XLSX file here
        </p>
        <p className="muted small">
          Up to {formatNumber(MAX_ADDRESSES)} addresses or 150 MiB. Other columns are kept.
        </p>
        <label className="button button-primary file-button">
          Choose a file
          <input
            type="file"
            className="sr-only"
            accept=".csv,.txt,.tsv,.xlsx,text/csv,text/plain,text/tab-separated-values,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            onChange={(event) => {
              choose(event.target.files?.[0]);
              event.target.value = '';
            }}
          />
        </label>
      </div>
      <div className="field paste">
        <label htmlFor="upload-paste">Or paste addresses</label>
        <textarea
          id="upload-paste"
          className="input"
          rows={4}
          value={pasted}
          onChange={(event) => setPasted(event.target.value)}
          aria-describedby="upload-paste-hint"
        />
        <p id="upload-paste-hint" className="hint">
          One per line, or separated by commas, semicolons or spaces.
        </p>
        <button
          type="button"
          className="button"
          disabled={pasted.trim() === ''}
          onClick={() => read({ kind: 'paste', text: pasted }, 'Pasted addresses')}
        >
          Use these addresses
        </button>
      </div>
      {stage.step === 'failed' ? (
        <p className="notice notice-error" role="alert">
          {stage.message}
        </p>
      ) : null}
    </div>
  );
}

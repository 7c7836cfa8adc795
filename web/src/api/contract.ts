/**
 * The shapes the dashboard API speaks, from the one definition the server validates with
 * (src/dashboard/contract.ts) and the engine's result type. Types only: `import type` keeps
 * TypeBox and the engine out of the bundle. The two constants below are checked against the
 * contract's by their types, so a change there fails the web typecheck instead of drifting.
 */
import type {
  CSRF_HEADER as ContractCsrfHeader,
  DASHBOARD_API as ContractApi,
  XLSX_MAX_ROWS as ContractXlsxMaxRows,
} from '../../../src/dashboard/contract.js';
import type { Status } from '../../../src/engine/types.js';

export type * from '../../../src/dashboard/contract.js';
export type {
  Check,
  Checks,
  MxCheck,
  Reason,
  SmtpCheck,
  Status,
  TranscriptLine,
  VerificationResult,
} from '../../../src/engine/types.js';

export const CSRF_HEADER: typeof ContractCsrfHeader = 'x-csrf-token';
export const DASHBOARD_API: typeof ContractApi = '/dashboard/api';
export const XLSX_MAX_ROWS: typeof ContractXlsxMaxRows = 100_000;

/** The verdicts, in the order the pages show them (src/engine/types.ts STATUSES). */
export const VERDICTS = [
  'deliverable',
  'risky',
  'undeliverable',
  'unknown',
] as const satisfies readonly Status[];

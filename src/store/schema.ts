/**
 * The database's shape for Kysely. Each part of the product owns one file under schema/;
 * this file only joins them.
 */
import type { AccountTables } from './schema/accounts.schema.js';
import type { AuditTables } from './schema/audit.schema.js';
import type { BootstrapTables } from './schema/bootstrap.schema.js';
import type { DashboardTables } from './schema/dashboard.schema.js';
import type { JobTables } from './schema/jobs.schema.js';
import type { ListScheduleTables } from './schema/list-schedule.schema.js';
import type { OutcomeSourceTables } from './schema/outcome-sources.schema.js';
import type { FilterTables, OutcomeTables } from './schema/outcomes.schema.js';
import type { TwoFactorTables } from './schema/two-factor.schema.js';
import type { WorkerTables } from './schema/worker.schema.js';

export type Database = AccountTables &
  JobTables &
  DashboardTables &
  TwoFactorTables &
  AuditTables &
  ListScheduleTables &
  WorkerTables &
  BootstrapTables &
  OutcomeTables &
  FilterTables &
  OutcomeSourceTables;

/**
 * The static list of migrations, in order. Names sort in the order they must run; each part of
 * the product adds its own file and one line here.
 */
import type { Migration } from 'kysely';
import { accountsMigration } from './0001-accounts.js';
import { jobsMigration } from './0002-jobs.js';
import { notificationsMigration } from './0003-notifications.js';
import { pendingChunksIndexMigration } from './0004-pending-chunks-index.js';
import { dashboardMigration } from './0005-dashboard.js';
import { publishableKeysMigration } from './0006-publishable-keys.js';
import { invitationIssuerMigration } from './0007-invitation-issuer.js';
import { twoFactorMigration } from './0008-two-factor.js';
import { auditLogMigration } from './0009-audit-log.js';
import { peopleMigration } from './0010-people.js';
import { listSchedulesMigration } from './0011-list-schedules.js';
import { accountSuspensionMigration } from './0012-account-suspension.js';
import { workersMigration } from './0013-workers.js';
import { scheduleStepsMigration } from './0014-schedule-steps.js';
import { workerChunksDoneMigration } from './0015-worker-chunks-done.js';
import { bootstrapMigration } from './0016-bootstrap.js';
import { outcomesMigration } from './0017-outcomes.js';
import { filtersMigration } from './0018-filters.js';
import { emailChangesMigration } from './0019-email-changes.js';
import { outcomeSourcesMigration } from './0020-outcome-sources.js';
import { verdictLogMigration } from './0021-verdict-log.js';
import { outcomesNotifyMigration } from './0022-outcomes-notify.js';

export const migrations: Record<string, Migration> = {
  '0001-accounts': accountsMigration,
  '0002-jobs': jobsMigration,
  '0003-notifications': notificationsMigration,
  '0004-pending-chunks-index': pendingChunksIndexMigration,
  '0005-dashboard': dashboardMigration,
  '0006-publishable-keys': publishableKeysMigration,
  '0007-invitation-issuer': invitationIssuerMigration,
  '0008-two-factor': twoFactorMigration,
  '0009-audit-log': auditLogMigration,
  '0010-people': peopleMigration,
  '0011-list-schedules': listSchedulesMigration,
  '0012-account-suspension': accountSuspensionMigration,
  '0013-workers': workersMigration,
  '0014-schedule-steps': scheduleStepsMigration,
  '0015-worker-chunks-done': workerChunksDoneMigration,
  '0016-bootstrap': bootstrapMigration,
  '0017-outcomes': outcomesMigration,
  '0018-filters': filtersMigration,
  '0019-email-changes': emailChangesMigration,
  '0020-outcome-sources': outcomeSourcesMigration,
  '0021-verdict-log': verdictLogMigration,
  '0022-outcomes-notify': outcomesNotifyMigration,
};

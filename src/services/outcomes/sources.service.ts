/**
 * The mail systems an account sends with (issue 27, part 1; docs/outcomes.md, "Mail systems"): an
 * outcome source is one provider's event webhook, pointed at a URL of its own,
 * `/hooks/outcomes/<id>/<token>`. The token is shown once and kept as its SHA-256; the provider's
 * verification material is checked on every delivery before anything is read from it, and the
 * events it carries go through `takeOutcomes` with the provider's name as their `source`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import { inTransaction, type Executor } from '../../store/executor.js';
import { refuseIfSuspended } from '../accounts/accounts.service.js';
import { recordAudit, type ChangeBy } from '../accounts/audit.service.js';
import {
  countOutcomeSources,
  countSourceEvents,
  deleteOutcomeSource as deleteSourceRow,
  getOutcomeSource,
  insertOutcomeSource,
  listOutcomeSources,
  pinTopicArn,
  recordNonce,
} from '../../store/outcome-source.store.js';
import type { EspProvider, OutcomeSourceRow } from '../../store/schema/outcome-sources.schema.js';
import { randomBase62 } from '../ids.js';
import type { ResultCache } from '../verify/result-cache.js';
import { mapMailgun, verifyMailgun } from './esp/mailgun.js';
import type { Mapped } from './esp/mapped.js';
import { mapPostmark, POSTMARK_USER, verifyPostmark } from './esp/postmark.js';
import { mapSendgrid, sendgridPublicKey, verifySendgrid } from './esp/sendgrid.js';
import { mapSes } from './esp/ses.js';
import { snsUrl, topicRegion, type SnsFetch, type SnsVerifier } from './esp/sns.js';
import { takeOutcomes, type IntakeReport } from './intake.service.js';

export type { EspProvider };
export const ESP_PROVIDERS = [
  'ses',
  'sendgrid',
  'mailgun',
  'postmark',
] as const satisfies readonly EspProvider[];

/** Sources an account may hold. */
export const MAX_SOURCES = 20;
export const MAX_LABEL_LENGTH = 100;
const MAX_KEY_LENGTH = 1000;

export interface OutcomeSourceView {
  id: string;
  provider: EspProvider;
  label: string | null;
  /** SES: the SNS topic accepted (the first one seen); null until then, and for the others. */
  topic_arn: string | null;
  /** Events stored from this source (a retry's duplicates not counted again). */
  events_taken: number;
  /** Provider events that are no outcome of ours (sends, blocks of the sender, unknown types). */
  events_ignored: number;
  last_event_at: string | null;
  created_at: string;
}

/** What creating a source answers, once: the URL holds the token. */
export interface CreatedOutcomeSource extends OutcomeSourceView {
  url: string;
  /** Postmark: the basic-auth credentials, and the URL carrying them (what to paste). */
  basic_auth: { username: string; password: string; url: string } | null;
}

function view(row: OutcomeSourceRow): OutcomeSourceView {
  return {
    id: row.id,
    provider: row.provider,
    label: row.label,
    topic_arn: row.topic_arn,
    events_taken: Number(row.events_taken),
    events_ignored: Number(row.events_ignored),
    last_event_at: row.last_event_at,
    created_at: row.created_at,
  };
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export interface SourceInput {
  accountId: string;
  provider: EspProvider;
  label?: string | null;
  /** SendGrid's verification public key, Mailgun's webhook signing key; none for SES and Postmark. */
  verificationKey?: string | null;
}

function checkedKey(provider: EspProvider, raw: string | null | undefined): string | null {
  const key = raw?.trim() ?? '';
  const refuse = (why: string): never => {
    throw new AppError('invalid_request', `verification_key: ${why}`);
  };
  switch (provider) {
    case 'sendgrid':
      if (key === '')
        return refuse("SendGrid's Verification Key is needed (Mail Settings, Signed Event Webhook)");
      sendgridPublicKey(key);
      return key;
    case 'mailgun':
      if (key === '') return refuse("Mailgun's HTTP webhook signing key is needed (Sending, Webhooks)");
      if (key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key))
        return refuse('not a Mailgun signing key');
      return key;
    case 'ses':
    case 'postmark':
      if (key !== '') return refuse(`${provider} has none: leave it out`);
      return null;
  }
}

/** Creates a source; its URL (and Postmark's password) are in the answer and nowhere else. */
export async function createOutcomeSource(
  db: Executor,
  clock: Clock,
  publicBaseUrl: string,
  input: SourceInput,
): Promise<CreatedOutcomeSource> {
  const label = input.label?.trim() || null;
  if (label !== null && label.length > MAX_LABEL_LENGTH)
    throw new AppError('invalid_request', `label: at most ${MAX_LABEL_LENGTH} characters`);
  const verifyKey = checkedKey(input.provider, input.verificationKey);
  const id = `osrc_${randomBase62(16)}`;
  const token = randomBase62(32);
  const password = input.provider === 'postmark' ? randomBase62(32) : null;
  const row: OutcomeSourceRow = {
    id,
    account_id: input.accountId,
    provider: input.provider,
    label,
    token_hash: sha256(token),
    verify_key: verifyKey,
    password_hash: password === null ? null : sha256(password),
    topic_arn: null,
    events_taken: 0,
    events_ignored: 0,
    last_event_at: null,
    created_at: clock.now().toISOString(),
  };
  await inTransaction(db, async (trx) => {
    if ((await countOutcomeSources(trx, input.accountId)) >= MAX_SOURCES)
      throw new AppError(
        'invalid_request',
        `an account holds at most ${MAX_SOURCES} outcome sources; delete one first`,
      );
    await insertOutcomeSource(trx, row);
  });
  const url = new URL(`/hooks/outcomes/${id}/${token}`, publicBaseUrl);
  let basicAuth: CreatedOutcomeSource['basic_auth'] = null;
  if (password !== null) {
    const withCredentials = new URL(url);
    withCredentials.username = POSTMARK_USER;
    withCredentials.password = password;
    basicAuth = { username: POSTMARK_USER, password, url: withCredentials.href };
  }
  return { ...view(row), url: url.href, basic_auth: basicAuth };
}

export async function listSources(db: Executor, accountId: string): Promise<OutcomeSourceView[]> {
  return (await listOutcomeSources(db, accountId)).map(view);
}

/** Deletes the account's source (its URL stops working at once); not_found when it holds none with that id. */
export async function deleteSource(db: Executor, accountId: string, id: string): Promise<void> {
  if (!(await deleteSourceRow(db, accountId, id))) throw new AppError('not_found', `no outcome source ${id}`);
}

/**
 * createOutcomeSource as a person does it (the dashboard): refused while the account is suspended
 * (for a member), the source and its `outcome_source_created` entry in one transaction.
 */
export async function createOutcomeSourceBy(
  db: Executor,
  clock: Clock,
  publicBaseUrl: string,
  input: SourceInput,
  by: ChangeBy,
): Promise<CreatedOutcomeSource> {
  return inTransaction(db, async (trx) => {
    if (by.actor.kind === 'member') await refuseIfSuspended(trx, input.accountId);
    const created = await createOutcomeSource(trx, clock, publicBaseUrl, input);
    await recordAudit(trx, clock, {
      accountId: input.accountId,
      type: 'outcome_source_created',
      ...by,
      details: { source_id: created.id, provider: created.provider },
    });
    return created;
  });
}

/** deleteSource with its `outcome_source_deleted` entry, in one transaction (deleting only takes away: never refused). */
export async function deleteSourceBy(
  db: Executor,
  clock: Clock,
  accountId: string,
  id: string,
  by: ChangeBy,
): Promise<void> {
  await inTransaction(db, async (trx) => {
    await deleteSource(trx, accountId, id);
    await recordAudit(trx, clock, {
      accountId,
      type: 'outcome_source_deleted',
      ...by,
      details: { source_id: id },
    });
  });
}

export interface HookDeps {
  db: Executor;
  clock: Clock;
  retentionMs: number;
  resultCache: ResultCache | null;
  sns: SnsVerifier;
  /** GETs an SNS subscription's SubscribeURL (already checked to be an SNS host's). */
  snsFetch: SnsFetch;
}

export interface HookRequest {
  sourceId: string;
  token: string;
  /** Header names lower-cased. */
  headers: Readonly<Record<string, string | undefined>>;
  body: Buffer;
}

export interface HookReport extends Omit<IntakeReport, 'refusals'> {
  ignored: number;
  /** SES: the SNS subscription this request asked for was confirmed. */
  subscription_confirmed: boolean;
}

/** The source the URL names, when its token is right; invalid_hook_token otherwise (an unknown id alike). */
async function sourceOf(db: Executor, id: string, token: string): Promise<OutcomeSourceRow> {
  const row = /^osrc_[0-9A-Za-z]{16}$/.test(id) ? await getOutcomeSource(db, id) : undefined;
  const given = Buffer.from(sha256(token), 'hex');
  const expected = Buffer.from(row?.token_hash ?? sha256(''), 'hex');
  if (row === undefined || !timingSafeEqual(given, expected))
    throw new AppError(
      'invalid_hook_token',
      'no outcome source has this URL; copy it again from where the source was made',
    );
  // A suspended account takes nothing in (the provider retries on its own schedule).
  if (row.account_suspended_at !== null)
    throw new AppError('account_suspended', 'the account of this outcome source is suspended');
  return row;
}

/**
 * One delivery of a provider's webhook: the source's token, then the provider's signature (or
 * Postmark's basic auth), then the payload; the events go through `takeOutcomes`. Nothing is
 * stored unless all of it holds. A repeat of a delivery stores nothing new.
 */
export async function receiveHook(deps: HookDeps, request: HookRequest): Promise<HookReport> {
  const source = await sourceOf(deps.db, request.sourceId, request.token);
  const now = deps.clock.now();
  let mapped: Mapped;
  let confirmed = false;
  switch (source.provider) {
    case 'sendgrid':
      verifySendgrid(source.verify_key ?? '', request.headers, request.body, now);
      mapped = mapSendgrid(request.body);
      break;
    case 'mailgun': {
      const delivery = verifyMailgun(source.verify_key ?? '', request.body, now);
      mapped = mapMailgun(delivery.event);
      const bodyHash = sha256(request.body.toString('utf8'));
      const seen = await recordNonce(
        deps.db,
        {
          source_id: source.id,
          nonce: delivery.token,
          body_hash: bodyHash,
          expires_at: delivery.expiresAt.toISOString(),
        },
        now.toISOString(),
      );
      if (seen !== null && seen !== bodyHash)
        throw new AppError(
          'invalid_signature',
          'this Mailgun token came before with another event: a replay is refused',
        );
      break;
    }
    case 'postmark':
      verifyPostmark(source.password_hash ?? '', request.headers.authorization);
      mapped = mapPostmark(request.body);
      break;
    case 'ses': {
      const message = await deps.sns.verify(request.body);
      const pinned = source.topic_arn ?? (await pinTopicArn(deps.db, source.id, message.TopicArn));
      if (pinned !== message.TopicArn)
        throw new AppError(
          'untrusted_topic',
          `this source takes SNS topic ${pinned ?? ''} only; make another source for another topic`,
        );
      if (message.Type === 'SubscriptionConfirmation') {
        const url = snsUrl(message.SubscribeURL, 'SubscribeURL', topicRegion(message.TopicArn) ?? '');
        try {
          await deps.snsFetch(url);
        } catch {
          throw new AppError(
            'service_unavailable',
            'the SNS subscription could not be confirmed now; SNS will ask again',
          );
        }
        confirmed = true;
      }
      mapped = message.Type === 'Notification' ? mapSes(message.Message) : { events: [], ignored: 0 };
      break;
    }
  }
  const report = await takeOutcomes(
    { db: deps.db, clock: deps.clock, retentionMs: deps.retentionMs, resultCache: deps.resultCache },
    { accountId: source.account_id, source: source.provider, events: mapped.events },
  );
  // An SNS subscription's confirmation carries no event: the source's last event stays as it was.
  if (mapped.events.length + mapped.ignored > 0)
    await countSourceEvents(deps.db, source.id, {
      taken: report.taken - report.duplicates,
      ignored: mapped.ignored,
      at: now.toISOString(),
    });
  return {
    taken: report.taken,
    duplicates: report.duplicates,
    refused: report.refused,
    ignored: mapped.ignored,
    subscription_confirmed: confirmed,
  };
}

/**
 * The MCP tools: one per thing an agent does with mailverdict, each calling one API operation
 * (its operationId in docs/openapi.json) with the input schema of that operation, and answering a
 * line an agent can read followed by the API's JSON. Verification, jobs and usage here; delivery
 * outcomes and filters in outcome-tools.ts.
 */
import type { Json } from './api-client.js';
import { outcomeTools } from './outcome-tools.js';
import {
  parameterSchema,
  requestBodySchema,
  type JsonSchema,
  type OpenApiDocument,
} from './openapi-schemas.js';
import { str, ToolInputError, type ToolDefinition } from './tool.js';

export { ToolInputError, type ToolAnswer, type ToolDefinition } from './tool.js';

/** Results rows a page holds at most. */
export const MAX_PAGE_ROWS = 1000;
export const DEFAULT_PAGE_ROWS = 100;

const yesNo = (v: unknown) => (v === true ? 'yes' : v === false ? 'no' : 'not found out');

function jobId(args: Json): string {
  const id = args.id;
  if (typeof id !== 'string' || id === '')
    throw new ToolInputError('id must be the job id (job_…) that submit_batch gave');
  return id;
}

function pageBound(args: Json, name: string, fallback: number, min: number, max: number): number {
  const value = args[name] ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new ToolInputError(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

function verifyText(r: Json): string {
  const who = typeof r.email === 'string' ? r.email : 'the address';
  const parts = [`${who}: ${str(r.status)} (score ${str(r.score)})`];
  parts.push(
    r.reason === null || r.reason === undefined ? 'no reason against it' : `reason: ${str(r.reason)}`,
  );
  if (typeof r.did_you_mean === 'string') parts.push(`did you mean ${r.did_you_mean}?`);
  parts.push(`disposable: ${yesNo(r.disposable)}`);
  if ('catchAll' in r) parts.push(`catch-all domain: ${yesNo(r.catchAll)}`);
  if (r.cached === true && typeof r.checked_at === 'string')
    parts.push(`from the result cache (checked ${r.checked_at})`);
  return `${parts.join('; ')}.`;
}

function jobText(j: Json): string {
  const id = str(j.job_id);
  switch (j.status) {
    case 'completed':
      return `Job ${id} completed: ${str(j.total)} addresses, ${str(j.valid)} valid, ${str(j.invalid)} undeliverable. Read its rows with get_job_results (kept until ${str(j.results_expire_at)}).`;
    case 'failed':
      return `Job ${id} failed: ${str(j.error ?? 'no reason given')}. ${str(j.processed ?? 0)} of ${str(j.total)} addresses were processed.`;
    default:
      return `Job ${id} is ${str(j.status)}: ${str(j.processed ?? 0)} of ${str(j.total)} addresses processed. Ask get_job again later.`;
  }
}

function usageText(u: Json): string {
  const quota = u.quota as Json;
  const rate = u.rate_limit as Json;
  const overage = u.overage as Json;
  return (
    `Plan ${str(u.plan)}: ${str(quota.used)} of ${str(quota.limit)} verifications used this period, ` +
    `${str(quota.remaining)} remaining until ${str(quota.reset_at)}; at most ${str(rate.per_second)} requests a second; ` +
    `overage ${overage.enabled === true ? `on (${str(overage.current_overage_count)} so far)` : 'off: past the quota, requests are refused with quota_exceeded'}.`
  );
}

function resultsText(page: {
  job_id: string;
  offset: number;
  rows: Json[];
  next_offset: number | null;
}): string {
  const head =
    page.rows.length === 0
      ? `Job ${page.job_id} has no rows from offset ${page.offset}.`
      : `Job ${page.job_id}, rows ${page.offset} to ${page.offset + page.rows.length - 1}:`;
  const lines = page.rows.map(
    (r) =>
      `${str(r.index)}. ${str(r.email)}: ${str(r.status)} (score ${str(r.score)})${r.reason === null ? '' : `, ${str(r.reason)}`}`,
  );
  const tail =
    page.next_offset === null
      ? 'That is the last row.'
      : `More rows: call get_job_results with offset ${page.next_offset}.`;
  return [head, ...lines, tail].join('\n');
}

/** The tools, their input schemas taken from `doc`. */
export function toolDefinitions(doc: OpenApiDocument): ToolDefinition[] {
  const jobIdSchema = (operationId: string) => parameterSchema(doc, operationId, 'path', 'id');
  const batch = requestBodySchema(doc, 'submitBatch');
  return [
    {
      name: 'verify_email',
      title: 'Verify an e-mail address',
      description:
        'Verifies one e-mail address now (syntax, DNS/MX, an SMTP probe of the mailbox, catch-all, disposable, role and free-provider flags) and answers its status: deliverable, undeliverable, risky or unknown, with a score from 0 to 100 (accept 60 or more) and the reason. A live key counts one verification against the quota.',
      operationId: 'verifyEmail',
      inputSchema: requestBodySchema(doc, 'verifyEmail') as ToolDefinition['inputSchema'],
      annotations: {
        readOnlyHint: false,
        idempotentHint: false,
        destructiveHint: false,
        openWorldHint: true,
      },
      async run(api, args) {
        const result = await api.verify(args);
        return { text: verifyText(result), data: result };
      },
    },
    {
      name: 'submit_batch',
      title: 'Submit a batch of addresses',
      description:
        'Submits a list of addresses for verification as a batch job and answers its job id at once; the job runs in the background. Follow it with get_job, then read its rows with get_job_results. A live key counts one verification per address against the quota.',
      operationId: 'submitBatch',
      inputSchema: {
        ...batch,
        type: 'object',
        properties: {
          ...(batch.properties as JsonSchema),
          idempotency_key: parameterSchema(doc, 'submitBatch', 'header', 'idempotency-key'),
        },
      },
      annotations: {
        readOnlyHint: false,
        idempotentHint: false,
        destructiveHint: false,
        openWorldHint: true,
      },
      async run(api, args) {
        const { idempotency_key: key, ...body } = args;
        if (key !== undefined && typeof key !== 'string')
          throw new ToolInputError('idempotency_key must be a string');
        const accepted = await api.submitBatch(body, key);
        return {
          text: `Job ${str(accepted.job_id)} accepted: ${str(accepted.total)} addresses, ${str(accepted.status)}. Follow it with get_job; its results are kept until ${str(accepted.results_expire_at)}.`,
          data: accepted,
        };
      },
    },
    {
      name: 'get_job',
      title: "A batch job's status",
      description:
        "Answers a batch job's status (queued, processing, completed, failed), how many addresses are done and, once completed, how many are valid.",
      operationId: 'getJob',
      inputSchema: { type: 'object', properties: { id: jobIdSchema('getJob') }, required: ['id'] },
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
      async run(api, args) {
        const job = await api.getJob(jobId(args));
        return { text: jobText(job), data: job };
      },
    },
    {
      name: 'get_job_results',
      title: "A completed job's results, a page at a time",
      description: `Answers the rows of a completed batch job in submission order, a page at a time: each address with its status, score and reason. Start at offset 0; the answer gives the next offset while more rows remain.`,
      operationId: 'getJobResults',
      inputSchema: {
        type: 'object',
        properties: {
          id: jobIdSchema('getJobResults'),
          offset: {
            type: 'integer',
            minimum: 0,
            default: 0,
            description: 'Position of the first row (0: the first address submitted).',
          },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: MAX_PAGE_ROWS,
            default: DEFAULT_PAGE_ROWS,
            description: 'Rows in this page.',
          },
        },
        required: ['id'],
      },
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
      async run(api, args) {
        const id = jobId(args);
        const offset = pageBound(args, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
        const limit = pageBound(args, 'limit', DEFAULT_PAGE_ROWS, 1, MAX_PAGE_ROWS);
        const page = await api.resultsPage(id, offset, limit);
        return { text: resultsText(page), data: { ...page } };
      },
    },
    {
      name: 'get_usage',
      title: "The account's usage",
      description:
        "Answers the account's plan, its verifications used and remaining this billing period, when the quota resets, its rate limit and overage.",
      operationId: 'getUsage',
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
      async run(api) {
        const usage = await api.usage();
        return { text: usageText(usage), data: usage };
      },
    },
    ...outcomeTools(doc),
  ];
}

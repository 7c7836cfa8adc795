/**
 * The MCP tools of delivery outcomes and filters (docs/outcomes.md): report what the account's
 * sends found, erase an address's history, and keep the account's allow and block filters. Each
 * calls one API operation with that operation's input schema from docs/openapi.json; the key needs
 * `outcomes:write` or `filters:write`, which keys made before those scopes existed do not have.
 */
import type { Json } from './api-client.js';
import {
  parameterSchema,
  requestBodySchema,
  type JsonSchema,
  type OpenApiDocument,
} from './openapi-schemas.js';
import { str, ToolInputError, type ToolDefinition } from './tool.js';

/** Filters named one per line in `list_filters`' text; the JSON has them all (up to 10,000). */
export const LISTED_FILTERS = 50;

const objectSchema = (schema: JsonSchema) => schema as ToolDefinition['inputSchema'];

function requiredString(args: Json, name: string, what: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value === '') throw new ToolInputError(`${name} must be ${what}`);
  return value;
}

function reportText(r: Json): string {
  const head = `Taken ${str(r.taken)} event${r.taken === 1 ? '' : 's'} (${str(r.duplicates)} already held), refused ${str(r.refused)}.`;
  const refusals = Array.isArray(r.refusals) ? (r.refusals as Json[]) : [];
  return [
    head,
    ...refusals.map((f) => `Event ${str(f.index)} refused, ${str(f.reason)}: ${str(f.message)}`),
  ].join('\n');
}

/** What a bounce or complaint message became: its events and the recipients it said nothing of. */
function messageText(r: Json): string {
  const events = Array.isArray(r.events) ? (r.events as Json[]) : [];
  const ignored = Array.isArray(r.ignored) ? (r.ignored as Json[]) : [];
  const what = r.kind === 'arf' ? 'A complaint report' : 'A delivery status notification';
  return [
    `${what}: ${reportText(r)}`,
    ...events.map(
      (e) => `- ${str(e.email)}: ${str(e.type)}${e.status === undefined ? '' : ` (${str(e.status)})`}`,
    ),
    ...ignored.map(
      (i) =>
        `- ${i.email === undefined ? 'no recipient' : str(i.email)}: no event, ${str(i.reason)}: ${str(i.message)}`,
    ),
  ].join('\n');
}

const percent = (rate: unknown): string =>
  typeof rate === 'number' ? `${(rate * 100).toFixed(rate < 0.01 ? 2 : 1)} %` : 'n/a (nothing sent)';

/** The accuracy report in sentences: the headline, then each verdict's bounce rate with its counts. */
function accuracyText(r: Json): string {
  const totals = (r.totals ?? {}) as Json;
  const byStatus = Array.isArray(r.by_status) ? (r.by_status as Json[]) : [];
  const deliverable = byStatus.find((s) => s.status === 'deliverable');
  const head =
    deliverable !== undefined && Number(deliverable.sent) > 0
      ? `Of the ${str(deliverable.sent)} addresses called deliverable and sent to from ${str(r.from)} to ${str(r.to)}, ${percent(deliverable.bounce_rate)} bounced (${str(deliverable.hard_bounced)}).`
      : `From ${str(r.from)} to ${str(r.to)}: no address called deliverable was sent to after its verification.`;
  return [
    head,
    `All verdicts: ${str(totals.verified)} addresses verified, ${str(totals.sent)} sent to, ${str(totals.hard_bounced)} hard bounced (${percent(totals.bounce_rate)}).`,
    ...byStatus.map(
      (s) =>
        `- ${str(s.status)}: ${str(s.verified)} verified, ${str(s.sent)} sent to, ${str(s.delivered)} delivered, ${str(s.hard_bounced)} hard bounced (${percent(s.bounce_rate)})`,
    ),
  ].join('\n');
}

/** The largest message the API takes (POST /v1/outcomes, message/rfc822). */
const MAX_MESSAGE_CHARACTERS = 1024 * 1024;

const filterLine = (f: Json) => `${str(f.action)} ${str(f.match)} ${str(f.value)} (${str(f.id)})`;

function listText(filters: Json[]): string {
  if (filters.length === 0) return 'The account has no filters: every address is verified on the network.';
  const lines = filters.slice(0, LISTED_FILTERS).map((f) => `- ${filterLine(f)}`);
  const more = filters.length - lines.length;
  return [
    `${filters.length} filter${filters.length === 1 ? '' : 's'}, oldest first:`,
    ...lines,
    ...(more > 0 ? [`and ${more} more in the JSON.`] : []),
  ].join('\n');
}

const VERDICT_OF = {
  block: 'undeliverable / blocked_by_filter',
  allow: 'deliverable / allowed_by_filter',
} as const;

export function outcomeTools(doc: OpenApiDocument): ToolDefinition[] {
  return [
    {
      name: 'report_outcomes',
      title: 'Report delivery outcomes',
      description:
        "Reports what the account's own sends found (up to 10,000 events): delivered, hard_bounce, soft_bounce, complaint, unsubscribed, opened, clicked. From then on a hard bounce answers undeliverable / previously_bounced and a complaint risky / complained without any network check, and a delivery lifts an earlier bounce. Give `at` (when it happened) for each event: an event is identified by (address, type, at, source_id), so a report sent again stores nothing twice. Events that cannot be taken are listed with their position and why; the others are taken. A test key gets the same answer and stores nothing.",
      operationId: 'reportOutcomes',
      inputSchema: objectSchema(requestBodySchema(doc, 'reportOutcomes')),
      annotations: {
        readOnlyHint: false,
        // Not without `at`: each report would then be new events at a new now.
        idempotentHint: false,
        destructiveHint: false,
        openWorldHint: false,
      },
      async run(api, args) {
        const answer = await api.reportOutcomes(args);
        return { text: reportText(answer), data: answer };
      },
    },
    {
      name: 'report_bounce_message',
      title: 'Report a bounce or complaint message',
      description:
        'Reads one raw bounce (a delivery status notification as Postfix, Exim, Microsoft 365, Gmail or Yahoo send them) or complaint report (ARF), headers and body exactly as received, and reports what it says about each recipient: a permanent 5.1.x failure is a hard bounce (the address is then answered undeliverable / previously_bounced without a network check), a 4.x.x or mailbox-full failure a soft bounce, a success a delivery, an abuse report a complaint. A refusal about the sender (5.7.x policy, spam, DMARC) is no event: it says nothing about the mailbox. The same message sent again stores nothing twice. A message that is neither a bounce nor a complaint is refused (not_a_bounce). At most 1 MiB.',
      operationId: 'reportOutcomes',
      inputSchema: {
        type: 'object',
        properties: {
          message: {
            type: 'string',
            description: 'The whole message as received: its header lines, a blank line, then the body.',
            maxLength: MAX_MESSAGE_CHARACTERS,
          },
        },
        required: ['message'],
      },
      annotations: {
        readOnlyHint: false,
        idempotentHint: true,
        destructiveHint: false,
        openWorldHint: false,
      },
      async run(api, args) {
        const message = requiredString(args, 'message', 'the raw message (headers, a blank line, the body)');
        const answer = await api.reportOutcomeMessage(message);
        return { text: messageText(answer), data: answer };
      },
    },
    {
      name: 'get_outcomes_report',
      title: 'How accurate were the verdicts?',
      description:
        "The account's accuracy report: for the addresses verified with a live key in the period (default the last 90 days) and sent to afterwards, how many bounced, by verdict status, reason, mail provider and score band, with the counts behind each rate, and predicted against observed delivery per score decile. Rests on the delivery outcomes the account reported (report_outcomes, report_bounce_message, its mail system's webhooks). Needs a key with outcomes:read.",
      operationId: 'getOutcomesReport',
      inputSchema: {
        type: 'object',
        properties: {
          from: parameterSchema(doc, 'getOutcomesReport', 'query', 'from'),
          to: parameterSchema(doc, 'getOutcomesReport', 'query', 'to'),
        },
      },
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
      async run(api, args) {
        const period: { from?: string; to?: string } = {};
        for (const name of ['from', 'to'] as const) {
          const value = args[name];
          if (value === undefined) continue;
          if (typeof value !== 'string') throw new ToolInputError(`${name} must be an ISO 8601 time`);
          period[name] = value;
        }
        const answer = await api.outcomesReport(period);
        return { text: accuracyText(answer), data: answer };
      },
    },
    {
      name: 'erase_outcomes',
      title: "Erase an address's outcomes",
      description:
        "Erases every outcome the account holds for one address, and its cached verification (a person's right to be forgotten). Its verdicts no longer use them: a bounce no longer suppresses it. Cannot be undone.",
      operationId: 'eraseOutcomes',
      inputSchema: {
        type: 'object',
        properties: { email: parameterSchema(doc, 'eraseOutcomes', 'query', 'email') },
        required: ['email'],
      },
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
      async run(api, args) {
        const answer = await api.eraseOutcomes(requiredString(args, 'email', 'the address to forget'));
        const n = answer.deleted;
        return {
          text: `Erased ${str(n)} event${n === 1 ? '' : 's'} of the address, and its cached verification.`,
          data: answer,
        };
      },
    },
    {
      name: 'list_filters',
      title: "The account's filters",
      description:
        "Lists the account's allow and block filters, oldest first: each with its id, action (allow or block), match (email, domain, tld, mx) and value as stored (normalised).",
      operationId: 'listFilters',
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
      async run(api) {
        const answer = await api.listFilters();
        const filters = Array.isArray(answer.filters) ? (answer.filters as Json[]) : [];
        return { text: listText(filters), data: answer };
      },
    },
    {
      name: 'add_filter',
      title: 'Add an allow or block filter',
      description:
        "Adds a filter to the account's live verifications, which it decides before any network check: a block answers undeliverable / blocked_by_filter, an allow deliverable / allowed_by_filter. match: email (one address), domain (the domain and its subdomains), tld (one label, e.g. xyz), mx (a mail server host and the hosts under it; needs only the MX look-up). The most specific filter wins: address, domain, top-level domain, then MX host. A (match, value) filtered already takes the new action. The value is stored normalised (lower-case, IDNA).",
      operationId: 'addFilter',
      inputSchema: objectSchema(requestBodySchema(doc, 'addFilter')),
      annotations: {
        readOnlyHint: false,
        idempotentHint: true,
        destructiveHint: false,
        openWorldHint: false,
      },
      async run(api, args) {
        const filter = await api.addFilter(args);
        const verdict = VERDICT_OF[filter.action === 'allow' ? 'allow' : 'block'];
        return {
          text: `Filter ${str(filter.id)}: ${str(filter.action)} ${str(filter.match)} ${str(filter.value)}. Live verifications it matches now answer ${verdict}, without a network check.`,
          data: filter,
        };
      },
    },
    {
      name: 'delete_filter',
      title: 'Delete a filter',
      description:
        "Deletes one of the account's filters by its id (flt_…, from list_filters or add_filter). The addresses it matched are then decided by a less specific filter, or verified on the network. Another account's id, or an unknown one, answers not_found.",
      operationId: 'deleteFilter',
      inputSchema: {
        type: 'object',
        properties: {
          id: { ...parameterSchema(doc, 'deleteFilter', 'path', 'id'), description: 'The filter id, flt_….' },
        },
        required: ['id'],
      },
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
      async run(api, args) {
        const id = requiredString(args, 'id', 'the filter id (flt_…) that list_filters or add_filter gave');
        const answer = await api.deleteFilter(id);
        return { text: `Filter ${id} deleted.`, data: answer };
      },
    },
  ];
}

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

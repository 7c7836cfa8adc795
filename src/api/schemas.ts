/**
 * TypeBox schemas of the v1 bodies, as the dashboard's (src/dashboard/contract.ts). They validate
 * requests, serialise responses, type the route handlers (the TypeBox type provider infers
 * `request.body`, `params`, `query` and the reply from them) and are the source of the OpenAPI
 * document (docs/openapi.json), so the four cannot drift apart.
 */
import { Type, type SchemaOptions, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import {
  DEFAULT_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  MIN_TIMEOUT_MS,
  PROVIDERS,
  REASONS,
  STATUSES,
} from '../engine/types.js';
import type { ErrorCode } from '../errors.js';
import { PLAN_SLUGS } from '../services/usage/plans.js';
import { HTTP_STATUS } from '../http/errors.js';

/**
 * `type: [t, 'null']`, as the OpenAPI document has always written a nullable value (TypeBox's
 * Union would write an `anyOf` instead, a different document).
 */
export const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}) => {
  // String keys only: a copy that kept TypeBox's Kind symbol would still say it is the plain type.
  const keywords: Record<string, unknown> = Object.fromEntries(Object.entries(schema));
  const { type, ...rest } = keywords;
  return Type.Unsafe<Static<T> | null>({ type: [type, 'null'], ...rest, ...options });
};

/** A string from a fixed list, written as `enum` (a Union of literals would be an `anyOf` of `const`). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: values, ...options });

/** A string from a fixed list, or null. */
export const NullableStringEnum = <const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
) => Type.Unsafe<T[number] | null>({ type: ['string', 'null'], enum: [...values, null], ...options });

/** `{ "type": "boolean", "enum": [true] }`: a field that is always true. */
export const AlwaysTrue = Type.Unsafe<true>({ type: 'boolean', enum: [true] });

/**
 * A field with a `default`: optional on the wire (not in `required`) and always present in the
 * handler, since the validator fills the default in (`useDefaults`, api/validation.ts). TypeBox
 * types an Optional as possibly absent, which is true of the wire only: hence the one cast.
 */
export const Defaulted = <T extends TSchema>(schema: T): T => Type.Optional(schema) as unknown as T;

export const RequestId = Type.String({
  description: 'Identifier of this request, req_<id>; also in X-Request-Id.',
});
export const DateTime = (options: SchemaOptions = {}) => Type.String({ format: 'date-time', ...options });

/** Response headers, for the OpenAPI document (docs/api.md describes them). */
const REQUEST_ID_HEADER = {
  'X-Request-Id': { type: 'string', description: 'req_<id>, on every response.' },
} as const;
const RATE_LIMIT_HEADERS = {
  RateLimit: {
    type: 'string',
    description: 'e.g. "default";r=49;t=1: r requests remaining, t seconds to reset.',
  },
  'RateLimit-Policy': { type: 'string', description: 'e.g. "default";q=50;w=1: q requests per w seconds.' },
} as const;

/** The headers of a successful authenticated response. */
export const SUCCESS_HEADERS = { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS } as const;

const NullableString = (description?: string) =>
  Nullable(Type.String(), description === undefined ? {} : { description });

/**
 * An entry of `checks`: `passed` plus the check's own details (docs/verdicts.md), each declared
 * so that the response is written by compiled code (undeclared details would still be written).
 */
const check = <P extends Record<string, TSchema>>(description: string, details: P) =>
  Type.Object(
    {
      passed: Nullable(Type.Boolean(), { description: 'null: not run or inconclusive.' }),
      ...details,
    },
    { description, additionalProperties: true },
  );

const flagCheck = (description: string) =>
  check(description, { value: Type.Boolean({ description: 'true: the flag is raised.' }) });

const historyEvent = Type.Object(
  {
    type: Type.String({
      description: 'delivered, hard_bounce, soft_bounce, complaint, unsubscribed, opened, clicked.',
    }),
    at: DateTime({ description: 'When it happened.' }),
    source: Type.String({
      description: 'Where it came from: api, message, upload, ses, sendgrid, mailgun, postmark.',
    }),
  },
  { additionalProperties: false },
);

const checksSchema = Type.Object(
  {
    syntax: Type.Optional(
      check('RFC 5321 syntax.', {
        local: NullableString('Local part as given; null when the syntax failed.'),
        domain: NullableString('Domain, lower-cased and IDNA-converted; null when the syntax failed.'),
        error: NullableString('Why the syntax check failed; null when it passed.'),
      }),
    ),
    mx: Type.Optional(
      check('DNS mail hosts.', {
        records: Type.Array(
          Type.Object({ exchange: Type.String(), priority: Type.Integer() }, { additionalProperties: true }),
        ),
        implicit: Type.Boolean({ description: "true: no MX, the domain's own A/AAAA is used." }),
        error: NullableString(
          'NXDOMAIN, NO_MAIL_HOST, NULL_MX, SERVFAIL, TIMEOUT, RESOLVER_UNTRUSTED...; null when found.',
        ),
        provider: NullableStringEnum(PROVIDERS, {
          description:
            'The mail provider that runs the domain\'s mail, from its most preferred MX host names (docs/verdicts.md, "Which provider runs the mail"); null for any other.',
        }),
        explanation: Type.Optional(
          Type.String({
            description:
              'Only with error RESOLVER_UNTRUSTED: the DNS resolver was not trusted, so its NXDOMAIN or "no mail host" answer was not believed (docs/verdicts.md).',
          }),
        ),
      }),
    ),
    smtp: Type.Optional(
      check('SMTP probe.', {
        host: NullableString(),
        code: Nullable(Type.Integer()),
        enhanced_code: NullableString(),
        message: NullableString(),
        tls: Type.Boolean(),
        duration_ms: Nullable(Type.Number()),
      }),
    ),
    disposable: Type.Optional(
      check('Known temporary (throw-away) provider.', {
        value: Type.Boolean({ description: 'true: the flag is raised.' }),
        signal: NullableStringEnum(['domain_list', 'mx_host'], {
          description:
            'What raised the flag: domain_list (the domain is on a disposable list), mx_host (its MX host belongs to a disposable provider); null when not raised.',
        }),
        mx_host: NullableString('For signal mx_host: the MX host that matched; else null.'),
      }),
    ),
    roleAddress: Type.Optional(flagCheck('Role address such as info@.')),
    freeProvider: Type.Optional(flagCheck('Free mailbox provider.')),
    catchAll: Type.Optional(
      check('Domain accepts every address.', {
        value: Nullable(Type.Boolean(), { description: 'null: not found out.' }),
      }),
    ),
    filter: Type.Optional(
      check(
        'The account\'s filter that decided the verdict (docs/outcomes.md, "Filters"); present only then.',
        {
          id: Type.String(),
          action: StringEnum(['allow', 'block']),
          match: StringEnum(['email', 'domain', 'mx', 'tld']),
          value: Type.String(),
        },
      ),
    ),
    history: Type.Optional(
      check(
        "What the account's own delivery outcomes say about the address (docs/outcomes.md); live keys only. passed: false when an outcome decided the verdict (previously_bounced, complained), true when a delivery or engagement is on record with no hard bounce after it, null otherwise.",
        {
          events: Type.Array(historyEvent, {
            description: 'The latest event of each type, newest first; empty when the account has none.',
          }),
          decided_by: Nullable(historyEvent),
          // Only for catch_all and unknown verdicts.
          domain: Type.Optional(
            Type.Object(
              {
                delivered: Type.Integer(),
                hard_bounces: Type.Integer(),
                prior: Type.Object({
                  provider: NullableString(),
                  alpha: Type.Number(),
                  beta: Type.Number(),
                }),
                estimate: Type.Number(),
              },
              {
                description:
                  'catch_all and unknown verdicts only: the account\'s deliveries and hard bounces at the domain, the provider\'s prior Beta(alpha, beta) and the estimate (delivered + alpha) / (delivered + hard_bounces + alpha + beta) (docs/outcomes.md, "The calibrated score").',
              },
            ),
          ),
        },
      ),
    ),
  },
  { description: 'Per-check breakdown; {} when include_checks is false.' },
);

export const verifyBodySchema = Type.Object({
  email: Type.String({
    maxLength: 254,
    description: 'The address to verify (RFC 5321, at most 254 characters).',
  }),
  timeout_ms: Defaulted(
    Type.Integer({
      minimum: MIN_TIMEOUT_MS,
      maximum: MAX_TIMEOUT_MS,
      default: DEFAULT_TIMEOUT_MS,
      description: 'Bound of the SMTP probe in milliseconds.',
    }),
  ),
  include_checks: Defaulted(
    Type.Boolean({ default: true, description: 'false: `checks` is an empty object.' }),
  ),
  fresh: Defaulted(
    Type.Boolean({
      default: false,
      description:
        'true: probe the address now even when the result cache holds an answer (the new result replaces it). Counted like any verification.',
    }),
  ),
  include_transcript: Defaulted(
    Type.Boolean({
      default: false,
      description:
        'true: the response carries `transcript`, the SMTP conversation of this verification. Implies a probe (the result cache is not read; the new result replaces the cached one, without its transcript). Test keys: an empty transcript.',
    }),
  ),
});
export type VerifyBody = Static<typeof verifyBodySchema>;

/** The SMTP conversation (docs/api.md, "The SMTP conversation"); shared with the dashboard's answer. */
export const transcriptSchema = Type.Array(
  Type.Object(
    {
      dir: StringEnum(['out', 'in'], { description: 'out: sent by the prober; in: received.' }),
      text: Type.String({ description: 'The line without its CRLF.' }),
      at_ms: Type.Integer({ description: 'Milliseconds since the verification started.' }),
    },
    { additionalProperties: false },
  ),
  {
    description:
      'Only with include_transcript: every command sent and every reply line received, across every MX host tried, in order. Lines in square brackets are not SMTP: a connection made ([connect host (ip) port n]) or failed, a host not asked, the TLS handshake ([TLS handshake: protocol, cipher]).',
  },
);

/** The result as a body schema (`headers` belongs to a response, api/publishable-schema.ts). */
export const verificationResultBody = Type.Object(
  {
    email: Type.String({
      description: 'The address as verified: local part as given, domain normalised.',
    }),
    valid: Type.Boolean({ description: 'true only when the mailbox was positively confirmed.' }),
    status: StringEnum(STATUSES),
    score: Type.Integer({ minimum: 0, maximum: 100, description: 'Quality score; accept >= 60.' }),
    disposable: Type.Boolean(),
    catchAll: Type.Boolean(),
    mx: Type.Boolean(),
    reason: NullableStringEnum(REASONS, {
      description:
        "null exactly when valid, except allowed_by_filter (valid, the account's allow filter decided).",
    }),
    latency_ms: Type.Integer({ description: 'Server-side processing time in milliseconds.' }),
    did_you_mean: NullableString('A likely correction of a mistyped domain, or null.'),
    checks: checksSchema,
    transcript: Type.Optional(transcriptSchema),
    cached: Type.Optional(
      Type.Boolean({
        description:
          'true: the answer came from the result cache (an earlier probe of this address for this account, at checked_at); false: it was found out for this request.',
      }),
    ),
    checked_at: Type.Optional(
      DateTime({
        description:
          'When the answer was found out: now for a probe (and a test key), earlier for a cached answer.',
      }),
    ),
    request_id: RequestId,
  },
  { description: 'The verification result.' },
);

export const usageSchema = Type.Object(
  {
    plan: StringEnum(PLAN_SLUGS),
    period_start: DateTime(),
    period_end: DateTime(),
    quota: Type.Object({
      limit: Nullable(Type.Integer(), {
        description: 'Verifications a month; null: no quota (plan `unlimited`).',
      }),
      used: Type.Integer(),
      remaining: Nullable(Type.Integer(), { description: 'max(0, limit - used); null: no quota.' }),
      reset_at: DateTime({ description: 'Equals period_end.' }),
    }),
    rate_limit: Type.Object({ per_second: Type.Integer() }),
    overage: Type.Object({
      enabled: Type.Boolean(),
      rate_per_verification: Type.Number(),
      current_overage_count: Type.Integer(),
    }),
    request_id: RequestId,
  },
  { description: 'Usage of the current billing period.', headers: SUCCESS_HEADERS },
);

/** The error envelope (api/errors.ts `errorBodySchema`, registered as `ErrorBody`). */
export interface ErrorBody {
  error: ErrorCode;
  message: string;
  request_id: string;
}

/**
 * Response schemas of the error statuses a route can answer, each the ErrorBody envelope with
 * the codes it may carry listed in the description.
 */
export function errorResponses(codes: readonly ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, 'internal_error' as const]) {
    const status = HTTP_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<number, TUnsafe<ErrorBody>> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const headers =
      status === 429
        ? {
            ...SUCCESS_HEADERS,
            'Retry-After': { type: 'integer', description: 'rate_limit_exceeded: seconds to wait.' },
          }
        : REQUEST_ID_HEADER;
    out[status] = Type.Unsafe<ErrorBody>({ description: list.join(' | '), headers, $ref: 'ErrorBody#' });
  }
  return out;
}

/** Errors any authenticated v1 route can answer. */
export const AUTH_ERRORS: readonly ErrorCode[] = [
  'invalid_api_key',
  'revoked_api_key',
  'insufficient_permissions',
  'account_suspended',
  'rate_limit_exceeded',
];

/** Errors of any v1 route that takes a JSON body. */
export const BODY_ERRORS: readonly ErrorCode[] = [
  'invalid_json',
  'unsupported_media_type',
  'payload_too_large',
  'invalid_request',
];

/** POST /v1/outcomes (docs/outcomes.md). Value errors are refused per event; shape errors refuse the request. */
export const outcomesBodySchema = Type.Object(
  {
    events: Type.Array(
      Type.Object(
        {
          email: Type.String({ maxLength: 1000, description: 'The recipient the outcome is about.' }),
          type: Type.String({
            maxLength: 100,
            description:
              'delivered, hard_bounce, soft_bounce, complaint, unsubscribed, opened or clicked; another value is refused (invalid_type).',
          }),
          at: Type.Optional(
            Type.String({
              maxLength: 100,
              description:
                'When it happened, ISO 8601 with a time zone (2026-03-10T12:00:00Z); default now. Give it for idempotency.',
            }),
          ),
          detail: Type.Optional(
            Type.String({
              maxLength: 10_000,
              description: 'A diagnostic such as the bounce status and text; kept to 300 characters.',
            }),
          ),
          source_id: Type.Optional(
            Type.String({
              maxLength: 1000,
              description:
                "Your mail system's id of the event or message (at most 200 characters); part of the event's identity.",
            }),
          ),
        },
        { additionalProperties: false },
      ),
      { maxItems: 10_000, description: 'At most 10,000 events.' },
    ),
  },
  { additionalProperties: false },
);

export const outcomesReportSchema = Type.Object(
  {
    taken: Type.Integer({ description: 'Events accepted (stored now, or already held).' }),
    duplicates: Type.Integer({ description: 'Of those, events the account already held.' }),
    refused: Type.Integer(),
    refusals: Type.Array(
      Type.Object(
        {
          index: Type.Integer({ description: 'Position of the event in `events`, from 0.' }),
          reason: StringEnum(['invalid_email', 'invalid_type', 'invalid_at', 'expired', 'invalid_source_id']),
          message: Type.String(),
        },
        { additionalProperties: false },
      ),
    ),
    kind: Type.Optional(
      StringEnum(['dsn', 'arf'], {
        description:
          'A message (Content-Type: message/rfc822) only: a delivery status notification (dsn) or a complaint report (arf).',
      }),
    ),
    events: Type.Optional(
      Type.Array(
        Type.Object(
          {
            email: Type.String(),
            type: StringEnum(['delivered', 'hard_bounce', 'soft_bounce', 'complaint']),
            status: Type.Optional(
              Type.String({ description: 'The enhanced status code it rests on (5.1.1).' }),
            ),
            at: Type.Optional(
              Type.String({
                description: "The message's Arrival-Date, else its Date; absent: the server's now.",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        {
          description:
            "A message only: the events its recipients became, in order (a refusal's index points here).",
        },
      ),
    ),
    ignored: Type.Optional(
      Type.Array(
        Type.Object(
          {
            email: Type.Optional(Type.String({ description: 'Absent when the message names no recipient.' })),
            status: Type.Optional(Type.String()),
            reason: StringEnum([
              'sender_policy',
              'not_about_mailbox',
              'unclassified',
              'feedback_type',
              'no_recipient',
            ]),
            message: Type.String(),
          },
          { additionalProperties: false },
        ),
        { description: 'A message only: recipients that became no event, and why (docs/outcomes.md).' },
      ),
    ),
    request_id: RequestId,
  },
  {
    description: 'What was taken and what was refused; for a message, also what it was and who was left out.',
    headers: SUCCESS_HEADERS,
  },
);

export const outcomesEraseQuerySchema = Type.Object(
  { email: Type.String({ maxLength: 254, description: 'The address to forget.' }) },
  { additionalProperties: false },
);

export const outcomesEraseSchema = Type.Object(
  {
    deleted: Type.Integer({ description: 'Events deleted (0 with a test key, which stores none).' }),
    request_id: RequestId,
  },
  { headers: SUCCESS_HEADERS },
);

/** GET /v1/account/outcomes (docs/outcomes.md, "How accurate are we?"). */
export const accountOutcomesQuerySchema = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        maxLength: 40,
        description:
          'Start of the period (included): an ISO 8601 date or time with a zone. Default: 90 days before `to`.',
      }),
    ),
    to: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'End of the period (included): an ISO 8601 date or time with a zone. Default: now.',
      }),
    ),
  },
  { additionalProperties: false },
);

const outcomeFigures = {
  verified: Type.Integer({
    description: 'Addresses given the verdict in the period (its latest verification).',
  }),
  sent: Type.Integer({ description: 'Of those, addresses with any delivery outcome after the verdict.' }),
  delivered: Type.Integer({
    description:
      'Of those sent to, addresses with a delivery, open or click after the verdict and no hard bounce.',
  }),
  hard_bounced: Type.Integer({
    description: 'Of those sent to, addresses with a hard bounce after the verdict.',
  }),
  bounce_rate: Nullable(Type.Number(), {
    description: '`hard_bounced / sent`, to 4 decimals; null when nothing was sent.',
  }),
};

const figuresOf = <P extends Record<string, TSchema>>(extra: P) =>
  Type.Object({ ...extra, ...outcomeFigures }, { additionalProperties: false });

export const accountOutcomesSchema = Type.Object(
  {
    from: DateTime(),
    to: DateTime(),
    totals: figuresOf({}),
    by_status: Type.Array(figuresOf({ status: Type.String() })),
    by_reason: Type.Array(figuresOf({ status: Type.String(), reason: NullableString() })),
    by_provider: Type.Array(figuresOf({ provider: NullableString() })),
    by_score_band: Type.Array(figuresOf({ min: Type.Integer(), max: Type.Integer() })),
    reliability: Type.Array(
      Type.Object(
        {
          min: Type.Integer(),
          max: Type.Integer(),
          n: Type.Integer({ description: 'delivered + hard_bounced' }),
          delivered: Type.Integer(),
          hard_bounced: Type.Integer(),
          predicted: Nullable(Type.Number()),
          observed: Nullable(Type.Number()),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'Per score decile: the mean score / 100 (predicted) against delivered / (delivered + hard_bounced) (observed).',
      },
    ),
    request_id: RequestId,
  },
  {
    description: 'The verdicts given in the period set against the delivery outcomes reported after each.',
    headers: SUCCESS_HEADERS,
  },
);

const filterProperties = {
  id: Type.String({ description: 'flt_<id>' }),
  action: StringEnum(['allow', 'block']),
  match: StringEnum(['email', 'domain', 'mx', 'tld']),
  value: Type.String({ description: 'Normalised: lower-case, IDNA.' }),
  created_at: DateTime(),
};

/** POST /v1/filters (docs/outcomes.md, "Filters"). */
export const filterBodySchema = Type.Object(
  {
    action: StringEnum(['allow', 'block']),
    match: StringEnum(['email', 'domain', 'mx', 'tld'], {
      description:
        'email: the address; domain: the domain or any subdomain of it; tld: the top-level domain; mx: an MX host of the domain is this host or under it.',
    }),
    value: Type.String({ minLength: 1, maxLength: 254 }),
  },
  { additionalProperties: false },
);

/** DELETE /v1/filters/:id and /v1/outcome-sources/:id. */
export const idParamsSchema = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const filterSchema = Type.Object(
  { ...filterProperties, request_id: RequestId },
  { headers: SUCCESS_HEADERS },
);

export const filterListSchema = Type.Object(
  { filters: Type.Array(Type.Object(filterProperties)), request_id: RequestId },
  { headers: SUCCESS_HEADERS },
);

export const filterDeletedSchema = Type.Object(
  { id: Type.String(), deleted: AlwaysTrue, request_id: RequestId },
  { headers: SUCCESS_HEADERS },
);

/**
 * JSON schemas of the v1 bodies. They validate requests, serialise responses and are the source
 * of the OpenAPI document (docs/openapi.json), so the three cannot drift apart.
 */
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

const requestId = {
  type: 'string',
  description: 'Identifier of this request, req_<id>; also in X-Request-Id.',
} as const;

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

const nullable = (type: string, description?: string) =>
  ({ type: [type, 'null'], ...(description === undefined ? {} : { description }) }) as const;

/**
 * An entry of `checks`: `passed` plus the check's own details (docs/verdicts.md), each declared
 * so that the response is written by compiled code (undeclared details would still be written).
 */
const check = <P extends Record<string, unknown>>(description: string, details: P) =>
  ({
    type: 'object',
    description,
    required: ['passed', ...Object.keys(details)],
    properties: {
      passed: { type: ['boolean', 'null'], description: 'null: not run or inconclusive.' },
      ...details,
    },
    additionalProperties: true,
  }) as const;

/** A check with details that only some answers carry (declared, not required). */
const withOptional = <C extends ReturnType<typeof check>, P extends Record<string, unknown>>(
  c: C,
  details: P,
) => ({ ...c, properties: { ...c.properties, ...details } }) as const;

const flagCheck = (description: string) =>
  check(description, { value: { type: 'boolean', description: 'true: the flag is raised.' } });

const historyEventSchema = {
  type: 'object',
  required: ['type', 'at', 'source'],
  properties: {
    type: {
      type: 'string',
      description: 'delivered, hard_bounce, soft_bounce, complaint, unsubscribed, opened, clicked.',
    },
    at: { type: 'string', format: 'date-time', description: 'When it happened.' },
    source: {
      type: 'string',
      description: 'Where it came from: api, message, upload, ses, sendgrid, mailgun, postmark.',
    },
  },
  additionalProperties: false,
} as const;

const checksSchema = {
  type: 'object',
  description: 'Per-check breakdown; {} when include_checks is false.',
  properties: {
    syntax: check('RFC 5321 syntax.', {
      local: nullable('string', 'Local part as given; null when the syntax failed.'),
      domain: nullable('string', 'Domain, lower-cased and IDNA-converted; null when the syntax failed.'),
      error: nullable('string', 'Why the syntax check failed; null when it passed.'),
    }),
    mx: withOptional(
      check('DNS mail hosts.', {
        records: {
          type: 'array',
          items: {
            type: 'object',
            required: ['exchange', 'priority'],
            properties: { exchange: { type: 'string' }, priority: { type: 'integer' } },
            additionalProperties: true,
          },
        },
        implicit: { type: 'boolean', description: "true: no MX, the domain's own A/AAAA is used." },
        error: nullable(
          'string',
          'NXDOMAIN, NO_MAIL_HOST, NULL_MX, SERVFAIL, TIMEOUT, RESOLVER_UNTRUSTED...; null when found.',
        ),
        provider: {
          type: ['string', 'null'],
          enum: [...PROVIDERS, null],
          description:
            'The mail provider that runs the domain\'s mail, from its most preferred MX host names (docs/verdicts.md, "Which provider runs the mail"); null for any other.',
        },
      }),
      {
        explanation: {
          type: 'string',
          description:
            'Only with error RESOLVER_UNTRUSTED: the DNS resolver was not trusted, so its NXDOMAIN or "no mail host" answer was not believed (docs/verdicts.md).',
        },
      },
    ),
    smtp: check('SMTP probe.', {
      host: nullable('string'),
      code: nullable('integer'),
      enhanced_code: nullable('string'),
      message: nullable('string'),
      tls: { type: 'boolean' },
      duration_ms: nullable('number'),
    }),
    disposable: check('Known temporary (throw-away) provider.', {
      value: { type: 'boolean', description: 'true: the flag is raised.' },
      signal: {
        type: ['string', 'null'],
        enum: ['domain_list', 'mx_host', null],
        description:
          'What raised the flag: domain_list (the domain is on a disposable list), mx_host (its MX host belongs to a disposable provider); null when not raised.',
      },
      mx_host: nullable('string', 'For signal mx_host: the MX host that matched; else null.'),
    }),
    roleAddress: flagCheck('Role address such as info@.'),
    freeProvider: flagCheck('Free mailbox provider.'),
    catchAll: check('Domain accepts every address.', {
      value: nullable('boolean', 'null: not found out.'),
    }),
    filter: check(
      'The account\'s filter that decided the verdict (docs/outcomes.md, "Filters"); present only then.',
      {
        id: { type: 'string' },
        action: { type: 'string', enum: ['allow', 'block'] },
        match: { type: 'string', enum: ['email', 'domain', 'mx', 'tld'] },
        value: { type: 'string' },
      },
    ),
    history: {
      ...check(
        "What the account's own delivery outcomes say about the address (docs/outcomes.md); live keys only. passed: false when an outcome decided the verdict (previously_bounced, complained), true when a delivery or engagement is on record with no hard bounce after it, null otherwise.",
        {
          events: {
            type: 'array',
            description: 'The latest event of each type, newest first; empty when the account has none.',
            items: historyEventSchema,
          },
          decided_by: { ...historyEventSchema, type: ['object', 'null'] },
          domain: {
            type: 'object',
            description:
              'catch_all and unknown verdicts only: the account\'s deliveries and hard bounces at the domain, the provider\'s prior Beta(alpha, beta) and the estimate (delivered + alpha) / (delivered + hard_bounces + alpha + beta) (docs/outcomes.md, "The calibrated score").',
            required: ['delivered', 'hard_bounces', 'prior', 'estimate'],
            properties: {
              delivered: { type: 'integer' },
              hard_bounces: { type: 'integer' },
              prior: {
                type: 'object',
                required: ['provider', 'alpha', 'beta'],
                properties: {
                  provider: { type: ['string', 'null'] },
                  alpha: { type: 'number' },
                  beta: { type: 'number' },
                },
              },
              estimate: { type: 'number' },
            },
          },
        },
      ),
      // `domain` only for catch_all and unknown verdicts.
      required: ['passed', 'events', 'decided_by'],
    },
  },
} as const;

export const verifyBodySchema = {
  type: 'object',
  required: ['email'],
  properties: {
    email: {
      type: 'string',
      maxLength: 254,
      description: 'The address to verify (RFC 5321, at most 254 characters).',
    },
    timeout_ms: {
      type: 'integer',
      minimum: MIN_TIMEOUT_MS,
      maximum: MAX_TIMEOUT_MS,
      default: DEFAULT_TIMEOUT_MS,
      description: 'Bound of the SMTP probe in milliseconds.',
    },
    include_checks: { type: 'boolean', default: true, description: 'false: `checks` is an empty object.' },
    fresh: {
      type: 'boolean',
      default: false,
      description:
        'true: probe the address now even when the result cache holds an answer (the new result replaces it). Counted like any verification.',
    },
    include_transcript: {
      type: 'boolean',
      default: false,
      description:
        'true: the response carries `transcript`, the SMTP conversation of this verification. Implies a probe (the result cache is not read; the new result replaces the cached one, without its transcript). Test keys: an empty transcript.',
    },
  },
} as const;

export interface VerifyBody {
  email: string;
  timeout_ms: number;
  include_checks: boolean;
  fresh: boolean;
  include_transcript: boolean;
}

/** The SMTP conversation (docs/api.md, "The SMTP conversation"); shared with the dashboard's answer. */
export const transcriptSchema = {
  type: 'array',
  description:
    'Only with include_transcript: every command sent and every reply line received, across every MX host tried, in order. Lines in square brackets are not SMTP: a connection made ([connect host (ip) port n]) or failed, a host not asked, the TLS handshake ([TLS handshake: protocol, cipher]).',
  items: {
    type: 'object',
    required: ['dir', 'text', 'at_ms'],
    properties: {
      dir: { type: 'string', enum: ['out', 'in'], description: 'out: sent by the prober; in: received.' },
      text: { type: 'string', description: 'The line without its CRLF.' },
      at_ms: { type: 'integer', description: 'Milliseconds since the verification started.' },
    },
    additionalProperties: false,
  },
} as const;

export const verificationResultSchema = {
  type: 'object',
  description: 'The verification result.',
  headers: SUCCESS_HEADERS,
  required: [
    'email',
    'valid',
    'status',
    'score',
    'disposable',
    'catchAll',
    'mx',
    'reason',
    'latency_ms',
    'did_you_mean',
    'checks',
    'request_id',
  ],
  properties: {
    email: {
      type: 'string',
      description: 'The address as verified: local part as given, domain normalised.',
    },
    valid: { type: 'boolean', description: 'true only when the mailbox was positively confirmed.' },
    status: { type: 'string', enum: STATUSES },
    score: { type: 'integer', minimum: 0, maximum: 100, description: 'Quality score; accept >= 60.' },
    disposable: { type: 'boolean' },
    catchAll: { type: 'boolean' },
    mx: { type: 'boolean' },
    reason: {
      type: ['string', 'null'],
      enum: [...REASONS, null],
      description:
        "null exactly when valid, except allowed_by_filter (valid, the account's allow filter decided).",
    },
    latency_ms: { type: 'integer', description: 'Server-side processing time in milliseconds.' },
    did_you_mean: {
      type: ['string', 'null'],
      description: 'A likely correction of a mistyped domain, or null.',
    },
    checks: checksSchema,
    transcript: transcriptSchema,
    cached: {
      type: 'boolean',
      description:
        'true: the answer came from the result cache (an earlier probe of this address for this account, at checked_at); false: it was found out for this request.',
    },
    checked_at: {
      type: 'string',
      format: 'date-time',
      description:
        'When the answer was found out: now for a probe (and a test key), earlier for a cached answer.',
    },
    request_id: requestId,
  },
} as const;

export const usageSchema = {
  type: 'object',
  description: 'Usage of the current billing period.',
  headers: SUCCESS_HEADERS,
  required: ['plan', 'period_start', 'period_end', 'quota', 'rate_limit', 'overage', 'request_id'],
  properties: {
    plan: { type: 'string', enum: PLAN_SLUGS },
    period_start: { type: 'string', format: 'date-time' },
    period_end: { type: 'string', format: 'date-time' },
    quota: {
      type: 'object',
      required: ['limit', 'used', 'remaining', 'reset_at'],
      properties: {
        limit: nullable('integer', 'Verifications a month; null: no quota (plan `unlimited`).'),
        used: { type: 'integer' },
        remaining: nullable('integer', 'max(0, limit - used); null: no quota.'),
        reset_at: { type: 'string', format: 'date-time', description: 'Equals period_end.' },
      },
    },
    rate_limit: {
      type: 'object',
      required: ['per_second'],
      properties: { per_second: { type: 'integer' } },
    },
    overage: {
      type: 'object',
      required: ['enabled', 'rate_per_verification', 'current_overage_count'],
      properties: {
        enabled: { type: 'boolean' },
        rate_per_verification: { type: 'number' },
        current_overage_count: { type: 'integer' },
      },
    },
    request_id: requestId,
  },
} as const;

/**
 * Response schemas of the error statuses a route can answer, each the ErrorBody envelope with
 * the codes it may carry listed in the description.
 */
export function errorResponses(codes: readonly ErrorCode[]): Record<number, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, 'internal_error' as const]) {
    const status = HTTP_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<number, unknown> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const headers =
      status === 429
        ? {
            ...SUCCESS_HEADERS,
            'Retry-After': { type: 'integer', description: 'rate_limit_exceeded: seconds to wait.' },
          }
        : REQUEST_ID_HEADER;
    out[status] = { description: list.join(' | '), headers, $ref: 'ErrorBody#' };
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
export const outcomesBodySchema = {
  type: 'object',
  required: ['events'],
  additionalProperties: false,
  properties: {
    events: {
      type: 'array',
      maxItems: 10_000,
      description: 'At most 10,000 events.',
      items: {
        type: 'object',
        required: ['email', 'type'],
        additionalProperties: false,
        properties: {
          email: { type: 'string', maxLength: 1000, description: 'The recipient the outcome is about.' },
          type: {
            type: 'string',
            maxLength: 100,
            description:
              'delivered, hard_bounce, soft_bounce, complaint, unsubscribed, opened or clicked; another value is refused (invalid_type).',
          },
          at: {
            type: 'string',
            maxLength: 100,
            description:
              'When it happened, ISO 8601 with a time zone (2026-03-10T12:00:00Z); default now. Give it for idempotency.',
          },
          detail: {
            type: 'string',
            maxLength: 10_000,
            description: 'A diagnostic such as the bounce status and text; kept to 300 characters.',
          },
          source_id: {
            type: 'string',
            maxLength: 1000,
            description:
              "Your mail system's id of the event or message (at most 200 characters); part of the event's identity.",
          },
        },
      },
    },
  },
} as const;

export const outcomesReportSchema = {
  type: 'object',
  description: 'What was taken and what was refused; for a message, also what it was and who was left out.',
  headers: SUCCESS_HEADERS,
  required: ['taken', 'duplicates', 'refused', 'refusals', 'request_id'],
  properties: {
    taken: { type: 'integer', description: 'Events accepted (stored now, or already held).' },
    duplicates: { type: 'integer', description: 'Of those, events the account already held.' },
    refused: { type: 'integer' },
    refusals: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'reason', 'message'],
        properties: {
          index: { type: 'integer', description: 'Position of the event in `events`, from 0.' },
          reason: {
            type: 'string',
            enum: ['invalid_email', 'invalid_type', 'invalid_at', 'expired', 'invalid_source_id'],
          },
          message: { type: 'string' },
        },
        additionalProperties: false,
      },
    },
    kind: {
      type: 'string',
      enum: ['dsn', 'arf'],
      description:
        'A message (Content-Type: message/rfc822) only: a delivery status notification (dsn) or a complaint report (arf).',
    },
    events: {
      type: 'array',
      description:
        "A message only: the events its recipients became, in order (a refusal's index points here).",
      items: {
        type: 'object',
        required: ['email', 'type'],
        properties: {
          email: { type: 'string' },
          type: { type: 'string', enum: ['delivered', 'hard_bounce', 'soft_bounce', 'complaint'] },
          status: { type: 'string', description: 'The enhanced status code it rests on (5.1.1).' },
          at: {
            type: 'string',
            description: "The message's Arrival-Date, else its Date; absent: the server's now.",
          },
        },
        additionalProperties: false,
      },
    },
    ignored: {
      type: 'array',
      description: 'A message only: recipients that became no event, and why (docs/outcomes.md).',
      items: {
        type: 'object',
        required: ['reason', 'message'],
        properties: {
          email: { type: 'string', description: 'Absent when the message names no recipient.' },
          status: { type: 'string' },
          reason: {
            type: 'string',
            enum: ['sender_policy', 'not_about_mailbox', 'unclassified', 'feedback_type', 'no_recipient'],
          },
          message: { type: 'string' },
        },
        additionalProperties: false,
      },
    },
    request_id: requestId,
  },
} as const;

export const outcomesEraseQuerySchema = {
  type: 'object',
  required: ['email'],
  additionalProperties: false,
  properties: { email: { type: 'string', maxLength: 254, description: 'The address to forget.' } },
} as const;

export const outcomesEraseSchema = {
  type: 'object',
  headers: SUCCESS_HEADERS,
  required: ['deleted', 'request_id'],
  properties: {
    deleted: { type: 'integer', description: 'Events deleted (0 with a test key, which stores none).' },
    request_id: requestId,
  },
} as const;

/** GET /v1/account/outcomes (docs/outcomes.md, "How accurate are we?"). */
export const accountOutcomesQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: {
      type: 'string',
      maxLength: 40,
      description:
        'Start of the period (included): an ISO 8601 date or time with a zone. Default: 90 days before `to`.',
    },
    to: {
      type: 'string',
      maxLength: 40,
      description: 'End of the period (included): an ISO 8601 date or time with a zone. Default: now.',
    },
  },
} as const;

const outcomeFigures = {
  verified: {
    type: 'integer',
    description: 'Addresses given the verdict in the period (its latest verification).',
  },
  sent: { type: 'integer', description: 'Of those, addresses with any delivery outcome after the verdict.' },
  delivered: {
    type: 'integer',
    description:
      'Of those sent to, addresses with a delivery, open or click after the verdict and no hard bounce.',
  },
  hard_bounced: {
    type: 'integer',
    description: 'Of those sent to, addresses with a hard bounce after the verdict.',
  },
  bounce_rate: {
    type: ['number', 'null'],
    description: '`hard_bounced / sent`, to 4 decimals; null when nothing was sent.',
  },
} as const;
const outcomeFigureNames = ['verified', 'sent', 'delivered', 'hard_bounced', 'bounce_rate'] as const;

const figuresOf = (extra: Record<string, unknown>, required: readonly string[]) =>
  ({
    type: 'object',
    required: [...required, ...outcomeFigureNames],
    additionalProperties: false,
    properties: { ...extra, ...outcomeFigures },
  }) as const;

export const accountOutcomesSchema = {
  type: 'object',
  description: 'The verdicts given in the period set against the delivery outcomes reported after each.',
  headers: SUCCESS_HEADERS,
  required: [
    'from',
    'to',
    'totals',
    'by_status',
    'by_reason',
    'by_provider',
    'by_score_band',
    'reliability',
    'request_id',
  ],
  properties: {
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    totals: figuresOf({}, []),
    by_status: { type: 'array', items: figuresOf({ status: { type: 'string' } }, ['status']) },
    by_reason: {
      type: 'array',
      items: figuresOf({ status: { type: 'string' }, reason: { type: ['string', 'null'] } }, [
        'status',
        'reason',
      ]),
    },
    by_provider: {
      type: 'array',
      items: figuresOf({ provider: { type: ['string', 'null'] } }, ['provider']),
    },
    by_score_band: {
      type: 'array',
      items: figuresOf({ min: { type: 'integer' }, max: { type: 'integer' } }, ['min', 'max']),
    },
    reliability: {
      type: 'array',
      description:
        'Per score decile: the mean score / 100 (predicted) against delivered / (delivered + hard_bounced) (observed).',
      items: {
        type: 'object',
        required: ['min', 'max', 'n', 'delivered', 'hard_bounced', 'predicted', 'observed'],
        additionalProperties: false,
        properties: {
          min: { type: 'integer' },
          max: { type: 'integer' },
          n: { type: 'integer', description: 'delivered + hard_bounced' },
          delivered: { type: 'integer' },
          hard_bounced: { type: 'integer' },
          predicted: { type: ['number', 'null'] },
          observed: { type: ['number', 'null'] },
        },
      },
    },
    request_id: requestId,
  },
} as const;

const filterProperties = {
  id: { type: 'string', description: 'flt_<id>' },
  action: { type: 'string', enum: ['allow', 'block'] },
  match: { type: 'string', enum: ['email', 'domain', 'mx', 'tld'] },
  value: { type: 'string', description: 'Normalised: lower-case, IDNA.' },
  created_at: { type: 'string', format: 'date-time' },
} as const;

/** POST /v1/filters (docs/outcomes.md, "Filters"). */
export const filterBodySchema = {
  type: 'object',
  required: ['action', 'match', 'value'],
  additionalProperties: false,
  properties: {
    action: { type: 'string', enum: ['allow', 'block'] },
    match: {
      type: 'string',
      enum: ['email', 'domain', 'mx', 'tld'],
      description:
        'email: the address; domain: the domain or any subdomain of it; tld: the top-level domain; mx: an MX host of the domain is this host or under it.',
    },
    value: { type: 'string', minLength: 1, maxLength: 254 },
  },
} as const;

export const filterSchema = {
  type: 'object',
  headers: SUCCESS_HEADERS,
  required: ['id', 'action', 'match', 'value', 'created_at', 'request_id'],
  properties: { ...filterProperties, request_id: requestId },
} as const;

export const filterListSchema = {
  type: 'object',
  headers: SUCCESS_HEADERS,
  required: ['filters', 'request_id'],
  properties: {
    filters: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'action', 'match', 'value', 'created_at'],
        properties: filterProperties,
      },
    },
    request_id: requestId,
  },
} as const;

export const filterDeletedSchema = {
  type: 'object',
  headers: SUCCESS_HEADERS,
  required: ['id', 'deleted', 'request_id'],
  properties: { id: { type: 'string' }, deleted: { type: 'boolean', enum: [true] }, request_id: requestId },
} as const;

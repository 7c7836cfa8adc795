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
import { PLAN_SLUGS } from '../services/plans.js';
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
    reason: { type: ['string', 'null'], enum: [...REASONS, null], description: 'null exactly when valid.' },
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
        limit: { type: 'integer' },
        used: { type: 'integer' },
        remaining: { type: 'integer', description: 'max(0, limit - used)' },
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

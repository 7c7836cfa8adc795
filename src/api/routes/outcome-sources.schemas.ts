/** JSON schemas of /v1/outcome-sources (docs/outcomes.md, "Mail systems"). */
import { ESP_PROVIDERS, MAX_LABEL_LENGTH } from '../../services/outcomes/sources.service.js';
import { SUCCESS_HEADERS } from '../schemas.js';

const requestId = {
  type: 'string',
  description: 'Identifier of this request, req_<id>; also in X-Request-Id.',
} as const;

const sourceProperties = {
  id: { type: 'string', description: 'osrc_<id>' },
  provider: { type: 'string', enum: ESP_PROVIDERS },
  label: { type: ['string', 'null'] },
  topic_arn: {
    type: ['string', 'null'],
    description:
      'ses: the SNS topic this source accepts, pinned by the first signed message; null until then and for the others.',
  },
  events_taken: { type: 'integer', description: 'Events stored from this source.' },
  events_ignored: {
    type: 'integer',
    description: "The provider's events that are no outcome (sends, refusals of the sender, unknown types).",
  },
  last_event_at: { type: ['string', 'null'], format: 'date-time' },
  created_at: { type: 'string', format: 'date-time' },
} as const;
const sourceRequired = [
  'id',
  'provider',
  'label',
  'topic_arn',
  'events_taken',
  'events_ignored',
  'last_event_at',
  'created_at',
] as const;

export const sourceBodySchema = {
  type: 'object',
  required: ['provider'],
  additionalProperties: false,
  properties: {
    provider: { type: 'string', enum: ESP_PROVIDERS },
    label: { type: 'string', maxLength: MAX_LABEL_LENGTH },
    verification_key: {
      type: 'string',
      maxLength: 2000,
      description:
        "sendgrid: the Signed Event Webhook's Verification Key (base64, or PEM); mailgun: the HTTP webhook signing key; ses and postmark: none.",
    },
  },
} as const;

export const createdSourceSchema = {
  type: 'object',
  headers: SUCCESS_HEADERS,
  required: [...sourceRequired, 'url', 'basic_auth', 'request_id'],
  properties: {
    ...sourceProperties,
    url: {
      type: 'string',
      description: 'The webhook URL to give the provider. It holds the token: shown once, kept hashed.',
    },
    basic_auth: {
      type: ['object', 'null'],
      description:
        'postmark: the HTTP basic-auth credentials, shown once, and the URL carrying them (paste that one); null for the others.',
      required: ['username', 'password', 'url'],
      properties: { username: { type: 'string' }, password: { type: 'string' }, url: { type: 'string' } },
    },
    request_id: requestId,
  },
} as const;

export const sourceListSchema = {
  type: 'object',
  headers: SUCCESS_HEADERS,
  required: ['sources', 'request_id'],
  properties: {
    sources: {
      type: 'array',
      items: { type: 'object', required: sourceRequired, properties: sourceProperties },
    },
    request_id: requestId,
  },
} as const;

export const sourceDeletedSchema = {
  type: 'object',
  headers: SUCCESS_HEADERS,
  required: ['id', 'deleted', 'request_id'],
  properties: { id: { type: 'string' }, deleted: { type: 'boolean', enum: [true] }, request_id: requestId },
} as const;

/** TypeBox schemas of /v1/outcome-sources (docs/outcomes.md, "Mail systems"). */
import { Type } from '@sinclair/typebox';
import { ESP_PROVIDERS, MAX_LABEL_LENGTH } from '../../services/outcomes/sources.service.js';
import { AlwaysTrue, DateTime, Nullable, RequestId, StringEnum, SUCCESS_HEADERS } from '../schemas.js';

const sourceProperties = {
  id: Type.String({ description: 'osrc_<id>' }),
  provider: StringEnum(ESP_PROVIDERS),
  label: Nullable(Type.String()),
  topic_arn: Nullable(Type.String(), {
    description:
      'ses: the SNS topic this source accepts, pinned by the first signed message; null until then and for the others.',
  }),
  events_taken: Type.Integer({ description: 'Events stored from this source.' }),
  events_ignored: Type.Integer({
    description: "The provider's events that are no outcome (sends, refusals of the sender, unknown types).",
  }),
  last_event_at: Nullable(DateTime()),
  created_at: DateTime(),
};

export const sourceBodySchema = Type.Object(
  {
    provider: StringEnum(ESP_PROVIDERS),
    label: Type.Optional(Type.String({ maxLength: MAX_LABEL_LENGTH })),
    verification_key: Type.Optional(
      Type.String({
        maxLength: 2000,
        description:
          "sendgrid: the Signed Event Webhook's Verification Key (base64, or PEM); mailgun: the HTTP webhook signing key; ses and postmark: none.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const createdSourceSchema = Type.Object(
  {
    ...sourceProperties,
    url: Type.String({
      description: 'The webhook URL to give the provider. It holds the token: shown once, kept hashed.',
    }),
    basic_auth: Nullable(
      Type.Object({ username: Type.String(), password: Type.String(), url: Type.String() }),
      {
        description:
          'postmark: the HTTP basic-auth credentials, shown once, and the URL carrying them (paste that one); null for the others.',
      },
    ),
    request_id: RequestId,
  },
  { headers: SUCCESS_HEADERS },
);

export const sourceListSchema = Type.Object(
  { sources: Type.Array(Type.Object(sourceProperties)), request_id: RequestId },
  { headers: SUCCESS_HEADERS },
);

export const sourceDeletedSchema = Type.Object(
  { id: Type.String(), deleted: AlwaysTrue, request_id: RequestId },
  { headers: SUCCESS_HEADERS },
);

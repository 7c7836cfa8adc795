/**
 * The dashboard's JSON API under /dashboard/api/: one TypeBox definition per body, so the server
 * validates and serialises with the JSON schema and the browser app (web/) imports the static
 * types (`import type`, nothing of this module reaches the bundle). Neither side keeps a copy.
 *
 * Conventions shared with v1 (docs/dashboard.md): errors use the v1 envelope
 * `{error, message, request_id}` (`ErrorEnvelope`), one code per condition; every call is scoped to the signed-in member's
 * account, so another account's key or job answers 404 `not_found`; every request that changes
 * state carries the session's CSRF token in `X-CSRF-Token`.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const IsoTime = Type.String({ description: 'ISO 8601 UTC time.' });
/**
 * Text a person typed that is stored and shown again (a key's name, an address, a file name): no
 * control character (ESC, BEL, CR, NUL…), which would reach the operator's terminal raw through
 * `members list` or `accounts show` (issue 16).
 */
const Printable = (options: { minLength?: number; maxLength: number }) =>
  Type.String({ ...options, pattern: '^[^\\u0000-\\u001F\\u007F]*$' });

/** Header that carries the CSRF token on every state-changing request. */
export const CSRF_HEADER = 'x-csrf-token';
/** Prefix of every dashboard endpoint. */
export const DASHBOARD_API = '/dashboard/api';

// ---- path parameters and queries ------------------------------------------------------------

/** /keys/:id, /jobs/:id, /members/:id. */
export const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export type IdParams = Static<typeof IdParams>;

/** POST /invitations/preview: a link's token, in the body (a path would reach access logs). */
export const TokenBody = Type.Object(
  { token: Type.String({ maxLength: 256 }) },
  { additionalProperties: false },
);
export type TokenBody = Static<typeof TokenBody>;

// ---- identity --------------------------------------------------------------------------------

export const Member = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.Union([Type.Literal('owner'), Type.Literal('member')]),
  created_at: IsoTime,
  /** null: invited, no password set yet. */
  joined_at: Nullable(IsoTime),
});
export type Member = Static<typeof Member>;

export const AccountSummary = Type.Object({
  id: Type.String(),
  plan: Type.String(),
  notification_email: Type.String(),
});
export type AccountSummary = Static<typeof AccountSummary>;

/** One of the person's accounts, as the account switcher lists it. */
export const Membership = Type.Object({
  account_id: Type.String(),
  member_id: Type.String(),
  plan: Type.String(),
  /** The account's notification address: what tells accounts apart until they have names. */
  notification_email: Type.String(),
  role: Type.Union([Type.Literal('owner'), Type.Literal('member')]),
  /** The account the session acts in. */
  current: Type.Boolean(),
});
export type Membership = Static<typeof Membership>;

/**
 * GET /session, POST /session, POST /invitations/accept, POST /invitations/join,
 * POST /password-resets/accept, POST /session/account.
 */
export const SessionView = Type.Object({
  /** The signed-in person (one address, one password, one second factor). */
  person: Type.Object({ id: Type.String(), email: Type.String(), operator: Type.Boolean() }),
  /** The current membership; null only for an operator who belongs to no account. */
  member: Nullable(Member),
  /** The account the session acts in; every other route is confined to it. */
  account: Nullable(AccountSummary),
  /** Every account the person belongs to (the switcher shows it when there are several). */
  memberships: Type.Array(Membership),
  csrf_token: Type.String(),
  expires_at: IsoTime,
  two_factor: Type.Object({
    /** Whether the member signs in with a second factor. */
    enabled: Type.Boolean(),
    /** Whether one is required here (the account requires it, or the person is an operator). */
    required: Type.Boolean(),
  }),
});
export type SessionView = Static<typeof SessionView>;

export const SignInBody = Type.Object(
  {
    email: Type.String({ maxLength: 254 }),
    password: Type.String({ maxLength: 1024 }),
    /**
     * The ALTCHA widget's payload (base64 JSON of a challenge from GET /session/challenge and its
     * solution): required after repeated failures, when sign-in answers 428 `challenge_required`.
     */
    altcha: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBody>;

/**
 * GET /session/challenge: a signed ALTCHA proof-of-work challenge (altcha-lib v2's format, as the
 * widget takes it), good for 5 minutes and once.
 */
export const SignInChallenge = Type.Object({
  parameters: Type.Record(Type.String(), Type.Unknown()),
  signature: Type.String(),
});
export type SignInChallenge = Static<typeof SignInChallenge>;

/**
 * 202 from POST /session (and from accepting a reset link) for a member with two factors: the
 * password was right, no session yet. The challenge, with a code, goes to POST
 * /session/second-factor within 5 minutes, once.
 */
export const SecondFactorChallenge = Type.Object({
  second_factor_required: Type.Literal(true),
  challenge: Type.String(),
  expires_at: IsoTime,
});
export type SecondFactorChallenge = Static<typeof SecondFactorChallenge>;

/** POST /session/second-factor: a TOTP code or a recovery code. */
export const SecondFactorBody = Type.Object(
  { challenge: Type.String({ maxLength: 256 }), code: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export type SecondFactorBody = Static<typeof SecondFactorBody>;

/**
 * POST /invitations/preview: what the invitation page shows before it is accepted. Whether the
 * address has a password here is not said (the inviting owner holds the link too; issue 26): a
 * person who has one signs in and accepts (POST /invitations/join); the link never sets an
 * existing person's password (POST /invitations/accept answers 401 for such an address).
 */
export const InvitationPreview = Type.Object({
  email: Type.String(),
  expires_at: IsoTime,
});
export type InvitationPreview = Static<typeof InvitationPreview>;

/** Accepting an invitation or a password reset: the one-time token from the link and the new password. */
export const SetPasswordBody = Type.Object(
  { token: Type.String({ maxLength: 256 }), password: Type.String({ minLength: 10, maxLength: 1024 }) },
  { additionalProperties: false },
);
export type SetPasswordBody = Static<typeof SetPasswordBody>;

/** POST /session/account: the account the session acts in from now on (one of the person's). */
export const SwitchAccountBody = Type.Object(
  { account_id: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
);
export type SwitchAccountBody = Static<typeof SwitchAccountBody>;

/** GET /session/operator: the signed-in operator (404 for anyone else). */
export const OperatorWhoami = Type.Object({ person_id: Type.String(), email: Type.String() });
export type OperatorWhoami = Static<typeof OperatorWhoami>;

/** POST /password-resets: always 202, whether or not the address is a member's. */
export const ForgotPasswordBody = Type.Object(
  { email: Type.String({ maxLength: 254 }) },
  { additionalProperties: false },
);
export type ForgotPasswordBody = Static<typeof ForgotPasswordBody>;

/** POST /account/password. */
export const ChangePasswordBody = Type.Object(
  {
    current_password: Type.String({ maxLength: 1024 }),
    new_password: Type.String({ minLength: 10, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export type ChangePasswordBody = Static<typeof ChangePasswordBody>;

/** POST /account/email: the person's new sign-in address, with their password. */
export const ChangeEmailBody = Type.Object(
  { password: Type.String({ maxLength: 1024 }), email: Type.String({ maxLength: 320 }) },
  { additionalProperties: false },
);
export type ChangeEmailBody = Static<typeof ChangeEmailBody>;

/** Changed at once (no relay), or a link e-mailed to the new address confirms it (a relay). */
export const EmailChangeResult = Type.Union([
  Type.Object({ status: Type.Literal('changed'), email: Type.String() }),
  Type.Object({
    status: Type.Literal('confirm_by_link'),
    email: Type.String(),
    /** False: the relay did not take the e-mail; ask again later. */
    emailed: Type.Boolean(),
    expires_at: IsoTime,
  }),
]);
export type EmailChangeResult = Static<typeof EmailChangeResult>;

/** POST /email-changes/accept: the token of the link e-mailed to the new address. */
export const ConfirmEmailBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export type ConfirmEmailBody = Static<typeof ConfirmEmailBody>;
export const ConfirmEmailResult = Type.Object({ email: Type.String() });
export type ConfirmEmailResult = Static<typeof ConfirmEmailResult>;

// ---- two-factor sign-in ----------------------------------------------------------------------

/** GET /account/two-factor. */
export const TwoFactorStatus = Type.Object({
  enabled: Type.Boolean(),
  enabled_at: Nullable(IsoTime),
  recovery_codes_left: Type.Integer(),
  /** Whether the owner requires two factors of every member. */
  account_requires: Type.Boolean(),
});
export type TwoFactorStatus = Static<typeof TwoFactorStatus>;

/** POST /account/two-factor/enrolment: shown this once; confirmed with a first code. */
export const TwoFactorEnrolment = Type.Object({
  /** Base32, for typing into an authenticator app. */
  secret: Type.String(),
  otpauth_uri: Type.String(),
  /** The otpauth URI as a QR code, an SVG document made by the server. */
  qr_svg: Type.String(),
});
export type TwoFactorEnrolment = Static<typeof TwoFactorEnrolment>;

/**
 * POST /account/two-factor/enrolment/confirm: the first code of the new secret and the person's
 * password (a session alone cannot turn two factors on: issue 26).
 */
export const TwoFactorCodeBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 64 }), password: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);
export type TwoFactorCodeBody = Static<typeof TwoFactorCodeBody>;

/** The ten single-use recovery codes, shown once when two factors are turned on. */
export const RecoveryCodes = Type.Object({ recovery_codes: Type.Array(Type.String()) });
export type RecoveryCodes = Static<typeof RecoveryCodes>;

/** POST /account/two-factor/disable: the password and a current code (or a recovery code). */
export const DisableTwoFactorBody = Type.Object(
  { password: Type.String({ maxLength: 1024 }), code: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export type DisableTwoFactorBody = Static<typeof DisableTwoFactorBody>;

/** PUT /account/two-factor/requirement: the owner's. */
export const TwoFactorRequirementBody = Type.Object(
  { required: Type.Boolean() },
  { additionalProperties: false },
);
export type TwoFactorRequirementBody = Static<typeof TwoFactorRequirementBody>;

// ---- overview --------------------------------------------------------------------------------

/** Verifications counted on one UTC day, split by where they came from. */
export const DayCount = Type.Object({
  date: Type.String({ description: 'YYYY-MM-DD (UTC).' }),
  single: Type.Integer(),
  batch: Type.Integer(),
});
export type DayCount = Static<typeof DayCount>;

export const Usage = Type.Object({
  plan: Type.String(),
  period_start: IsoTime,
  period_end: IsoTime,
  /** `limit` and `remaining` null: no quota (plan `unlimited`). */
  quota: Type.Object({
    limit: Nullable(Type.Integer()),
    used: Type.Integer(),
    remaining: Nullable(Type.Integer()),
    reset_at: IsoTime,
  }),
  rate_limit: Type.Object({ per_second: Type.Integer() }),
  overage: Type.Object({
    enabled: Type.Boolean(),
    rate_per_verification: Type.Number(),
    current_overage_count: Type.Integer(),
  }),
});
export type Usage = Static<typeof Usage>;

/** A job's state (docs/dashboard.md): v1's states, and `cancelled` for a job cancelled by its owner. */
export const JobState = Type.Union([
  Type.Literal('queued'),
  Type.Literal('processing'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);
export type JobState = Static<typeof JobState>;

/** A job as the dashboard lists it: the v1 job plus the list's name and the counts so far. */
export const JobItem = Type.Object({
  job_id: Type.String(),
  name: Nullable(Type.String({ description: 'The uploaded file name, or null for an API batch.' })),
  status: JobState,
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  total: Type.Integer(),
  processed: Type.Integer(),
  created_at: IsoTime,
  completed_at: Nullable(IsoTime),
  results_expire_at: IsoTime,
  /** Whether the results can still be downloaded (completed and not past retention). */
  downloadable: Type.Boolean(),
  /** Whether a download keeps the uploaded file's other columns. */
  has_original_columns: Type.Boolean(),
  /** Why a queued or processing job waits: an operator suspended the account (docs/operators.md). */
  paused: Nullable(Type.Literal('account_suspended')),
});
export type JobItem = Static<typeof JobItem>;

/** A list skipped by its schedule for quota, until a run is made again (the overview's notice). */
export const ScheduleNotice = Type.Object({
  /** The list's first job (its page). */
  job_id: Type.String(),
  name: Type.String(),
  skipped_at: IsoTime,
  /** Addresses the run needed. */
  need: Type.Integer(),
  next_run_at: IsoTime,
});

/** A publishable key at its daily cap today (the overview's notice; issue 26). */
export const CapNotice = Type.Object({
  key_id: Type.String(),
  name: Nullable(Type.String()),
  display: Type.String(),
  daily_cap: Type.Integer(),
  /** The UTC day, YYYY-MM-DD. */
  day: Type.String(),
});

/** GET /overview. `daily` covers every day of the current and the previous period (zeros included). */
export const Overview = Type.Object({
  usage: Usage,
  daily: Type.Object({ current: Type.Array(DayCount), previous: Type.Array(DayCount) }),
  /** current_overage_count × rate_per_verification while overage is on; null when it is off. */
  overage_cost: Nullable(Type.Number()),
  latest_jobs: Type.Array(JobItem),
  schedule_notices: Type.Array(ScheduleNotice),
  cap_notices: Type.Array(CapNotice),
  /** Set while an operator has the account suspended: its keys are refused and its lists paused. */
  suspension: Nullable(Type.Object({ since: IsoTime, reason: Nullable(Type.String()) })),
});
export type Overview = Static<typeof Overview>;

// ---- outcome sources (docs/outcomes.md, "Mail systems") ------------------------------------

export const ESP_PROVIDER = Type.Union([
  Type.Literal('ses'),
  Type.Literal('sendgrid'),
  Type.Literal('mailgun'),
  Type.Literal('postmark'),
]);

export const OutcomeSourceItem = Type.Object({
  id: Type.String(),
  provider: ESP_PROVIDER,
  label: Nullable(Type.String()),
  /** SES: the SNS topic pinned by the first signed message. */
  topic_arn: Nullable(Type.String()),
  events_taken: Type.Integer(),
  events_ignored: Type.Integer(),
  last_event_at: Nullable(IsoTime),
  created_at: IsoTime,
});
export type OutcomeSourceItem = Static<typeof OutcomeSourceItem>;

/** GET /outcome-sources: oldest first. */
export const OutcomeSourceList = Type.Object({
  sources: Type.Array(OutcomeSourceItem),
  limit: Type.Integer({ description: 'Most sources an account may hold.' }),
});
export type OutcomeSourceList = Static<typeof OutcomeSourceList>;

export const CreateOutcomeSourceBody = Type.Object(
  {
    provider: ESP_PROVIDER,
    label: Type.Optional(Printable({ maxLength: 100 })),
    /** SendGrid's verification key, Mailgun's webhook signing key; none for SES and Postmark. */
    verification_key: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);
export type CreateOutcomeSourceBody = Static<typeof CreateOutcomeSourceBody>;

/** POST /outcome-sources: the only response that carries the URL (and Postmark's password). */
export const CreatedOutcomeSource = Type.Object({
  source: OutcomeSourceItem,
  url: Type.String(),
  basic_auth: Nullable(Type.Object({ username: Type.String(), password: Type.String(), url: Type.String() })),
});
export type CreatedOutcomeSource = Static<typeof CreatedOutcomeSource>;

// ---- keys ------------------------------------------------------------------------------------

export const KeyItem = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  kind: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  scopes: Type.Array(Type.String()),
  /** e.g. `svc_live_…a1B2`: the prefix and last characters, never the secret. */
  display: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
  created_at: IsoTime,
  last_used_at: Nullable(IsoTime),
  revoked_at: Nullable(IsoTime),
  /** A publishable key (docs/widget.md): only POST /v1/verify, from its allowed origins. */
  publishable: Type.Boolean(),
  allowed_origins: Type.Array(Type.String()),
  /** A publishable key's own limits; null: the server's defaults. */
  visitor_rate_limit: Nullable(Type.Integer()),
  key_rate_limit: Nullable(Type.Integer()),
  daily_cap: Nullable(Type.Integer()),
  /** A publishable key's cap in force and what one day at it costs (issue 26); null for a secret key. */
  cap_cost: Nullable(
    Type.Object({
      daily_cap: Type.Integer(),
      default_cap: Type.Boolean(),
      monthly_quota: Nullable(Type.Number()),
      day_percent_of_quota: Nullable(Type.Number()),
      month_exceeds_quota: Type.Boolean(),
      warning: Nullable(Type.String()),
    }),
  ),
});
export type KeyItem = Static<typeof KeyItem>;

/** GET /keys: newest first, revoked keys included. */
export const KeyList = Type.Object({
  keys: Type.Array(KeyItem),
  active: Type.Integer(),
  limit: Type.Integer({ description: 'Most active keys an account may hold (10).' }),
  scopes: Type.Array(Type.String(), { description: 'Every scope a key can have.' }),
  /** The widget for a publishable key's snippet (docs/widget.md); null when the build has none. */
  widget: Nullable(Type.Object({ url: Type.String(), integrity: Type.String() })),
});
export type KeyList = Static<typeof KeyList>;

export const CreateKeyBody = Type.Object(
  {
    name: Printable({ minLength: 1, maxLength: 100 }),
    kind: Type.Union([Type.Literal('live'), Type.Literal('test')]),
    scopes: Type.Array(Type.String(), { minItems: 1, maxItems: 10, uniqueItems: true }),
    /** Makes a publishable key; `scopes` must then be `["verify"]`. */
    publishable: Type.Optional(
      Type.Object(
        {
          allowedOrigins: Type.Array(Type.String({ maxLength: 300 }), { minItems: 1, maxItems: 20 }),
          visitorRateLimit: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
          keyRateLimit: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
          dailyCap: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

/** POST /keys and POST /keys/:id/rotate: the only responses that carry a secret. */
export const CreatedKey = Type.Object({
  key: KeyItem,
  secret: Type.String(),
  /** Rotation: the key this one replaces (still active until it is revoked). */
  replaces: Type.Optional(Type.String()),
  /** A publishable key whose daily cap times 30 exceeds the monthly quota: the warning to show. */
  warning: Nullable(Type.String()),
});
export type CreatedKey = Static<typeof CreatedKey>;

// ---- filters (docs/outcomes.md, "Filters") ------------------------------------------------------

export const FilterAction = Type.Union([Type.Literal('allow'), Type.Literal('block')]);
export type FilterAction = Static<typeof FilterAction>;
export const FilterMatch = Type.Union([
  Type.Literal('email'),
  Type.Literal('domain'),
  Type.Literal('mx'),
  Type.Literal('tld'),
]);
export type FilterMatch = Static<typeof FilterMatch>;

/** One of the account's allow and block filters; `value` as stored (normalised). */
export const FilterItem = Type.Object({
  id: Type.String(),
  action: FilterAction,
  match: FilterMatch,
  value: Type.String(),
  created_at: IsoTime,
});
export type FilterItem = Static<typeof FilterItem>;

/** GET /filters: oldest first, with the limits the service enforces. */
export const FilterList = Type.Object({
  filters: Type.Array(FilterItem),
  limit: Type.Integer({ description: 'Most filters an account may hold (10,000).' }),
  mx_limit: Type.Integer({ description: 'Most mx filters an account may hold (100).' }),
});
export type FilterList = Static<typeof FilterList>;

/** POST /filters: the v1 body (POST /v1/filters); a (match, value) filtered already takes the new action. */
export const CreateFilterBody = Type.Object(
  {
    action: FilterAction,
    match: FilterMatch,
    value: Printable({ minLength: 1, maxLength: 254 }),
  },
  { additionalProperties: false },
);
export type CreateFilterBody = Static<typeof CreateFilterBody>;

// ---- lists (batch jobs) ----------------------------------------------------------------------

/** GET /jobs?cursor=…: the next page after `next_cursor`. */
export const JobListQuery = Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 200 })) });
export type JobListQuery = Static<typeof JobListQuery>;

/** GET /jobs: newest first, a page at a time. */
export const JobList = Type.Object({
  jobs: Type.Array(JobItem),
  next_cursor: Nullable(Type.String()),
});
export type JobList = Static<typeof JobList>;

/** A list's re-verification schedule (docs/dashboard.md, "Re-verification on a schedule"). */
export const Schedule = Type.Object({ every_days: Type.Integer(), next_run_at: IsoTime });
export type Schedule = Static<typeof Schedule>;

/** GET /jobs/:id: the job, its counts by verdict and reason once completed, its list's schedule. */
export const JobDetail = Type.Object({
  job: JobItem,
  counts: Nullable(
    Type.Object({
      by_status: Type.Record(Type.String(), Type.Integer()),
      by_reason: Type.Record(Type.String(), Type.Integer()),
    }),
  ),
  schedule: Nullable(Schedule),
});
export type JobDetail = Static<typeof JobDetail>;

/** PUT /jobs/:id/schedule: every N days (1 to 365), or null to stop. */
export const ScheduleBody = Type.Object(
  { every_days: Nullable(Type.Integer({ minimum: 1, maximum: 365 })) },
  { additionalProperties: false },
);
export type ScheduleBody = Static<typeof ScheduleBody>;
export const ScheduleAnswer = Type.Object({ schedule: Nullable(Schedule) });
export type ScheduleAnswer = Static<typeof ScheduleAnswer>;

/** GET /jobs/:id/history: the list's upload and runs, newest first. */
export const ListHistory = Type.Object({
  runs: Type.Array(
    Type.Object({
      job_id: Nullable(Type.String()),
      kind: Type.Union([Type.Literal('upload'), Type.Literal('run'), Type.Literal('skipped')]),
      created_at: IsoTime,
      status: Nullable(JobState),
      total: Type.Integer(),
      counts: Nullable(Type.Record(Type.String(), Type.Integer())),
      changes: Nullable(
        Type.Object({
          became_undeliverable: Type.Integer(),
          became_deliverable: Type.Integer(),
          compared_with: Nullable(Type.String()),
        }),
      ),
    }),
  ),
});
export type ListHistory = Static<typeof ListHistory>;

/**
 * POST /lists: the upload. The body is the file itself as CSV text (`text/csv`; a TXT list is a
 * CSV of one column, an XLSX file is converted to CSV in the browser), and the query names how to
 * read it. The server keeps the file's other columns beside the results.
 */
export const UploadQuery = Type.Object(
  {
    name: Printable({ minLength: 1, maxLength: 255 }),
    /** Zero-based index of the column that holds the addresses. */
    email_column: Type.Integer({ minimum: 0, maximum: 1000 }),
    /** Whether the first row names the columns. */
    header: Type.Boolean(),
    mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  },
  { additionalProperties: false },
);
export type UploadQuery = Static<typeof UploadQuery>;

/**
 * GET /jobs/:id/download?verdicts=deliverable,risky&format=xlsx&corrected=beside: `verdicts`
 * absent means every row; `format` csv (default) or xlsx; `corrected` beside or replace puts the
 * suggested address in a column after the address or in its place.
 */
/**
 * The largest list offered as XLSX (src/services/lists/list-download.ts builds the sheet in memory:
 * 500,000 rows peaked at 813 MB); bigger lists download as CSV, which streams.
 */
export const XLSX_MAX_ROWS = 100_000;

export const DownloadQuery = Type.Object(
  {
    verdicts: Type.Optional(Type.String({ description: 'Comma list of verdicts to keep.' })),
    format: Type.Optional(Type.Union([Type.Literal('csv'), Type.Literal('xlsx')])),
    corrected: Type.Optional(Type.Union([Type.Literal('beside'), Type.Literal('replace')])),
  },
  { additionalProperties: false },
);
export type DownloadQuery = Static<typeof DownloadQuery>;

// ---- verify ----------------------------------------------------------------------------------

/**
 * POST /verify: one live verification, counted against the quota like POST /v1/verify.
 * `include_transcript`: the answer carries `transcript`, the SMTP conversation (as v1's flag).
 */
export const VerifyBody = Type.Object(
  { email: Type.String({ maxLength: 320 }), include_transcript: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type VerifyBody = Static<typeof VerifyBody>;

// ---- settings --------------------------------------------------------------------------------

/** GET /members. */
export const MemberList = Type.Object({ members: Type.Array(Member) });
export type MemberList = Static<typeof MemberList>;

/** POST /members: invite. The link is shown to the inviter; it is e-mailed too when a relay exists. */
export const InviteBody = Type.Object(
  { email: Printable({ minLength: 3, maxLength: 254 }) },
  { additionalProperties: false },
);
export type InviteBody = Static<typeof InviteBody>;
export const Invitation = Type.Object({
  member: Member,
  link: Nullable(
    Type.String({
      description:
        'The one-time link; null when the address was invited already: its earlier link keeps working and the person is e-mailed a new one when a relay is configured.',
    }),
  ),
  expires_at: IsoTime,
  emailed: Type.Boolean(),
});
export type Invitation = Static<typeof Invitation>;

/** GET /settings. The webhook secret itself comes only from POST /settings/webhook-secret/reveal. */
export const Settings = Type.Object({
  /** The account's id, for the command line (`mailverdict keys create --account …`). */
  account_id: Type.String(),
  notification_email: Type.String(),
  webhook_secret_hint: Type.String({ description: 'The last characters of the secret.' }),
  relay_configured: Type.Boolean(),
});
export type Settings = Static<typeof Settings>;

export const SettingsBody = Type.Object(
  { notification_email: Printable({ minLength: 3, maxLength: 254 }) },
  { additionalProperties: false },
);
export type SettingsBody = Static<typeof SettingsBody>;

/** POST /settings/webhook-secret/reveal and /rotate. */
export const WebhookSecret = Type.Object({ webhook_secret: Type.String() });
export type WebhookSecret = Static<typeof WebhookSecret>;

/** The error envelope, the one of the whole service (v1's, docs/api.md "Errors"). */
export const ErrorEnvelope = Type.Object({
  error: Type.String({ description: 'The code (src/errors.ts; docs/api.md lists them all).' }),
  message: Type.String(),
  request_id: Type.String(),
});
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

// ---- security log and sessions (issue 16) ----------------------------------------------------

/** GET /audit and GET /audit.csv: filters; `before` is the `next_before` of the page before. */
export const AuditQuery = Type.Object(
  {
    type: Type.Optional(Type.String({ maxLength: 64 })),
    member: Type.Optional(Type.String({ maxLength: 100 })),
    before: Type.Optional(Type.String({ maxLength: 400 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;

/** The security log's event types (services/accounts/audit.service.ts), for the page's labels. */
export type { AuditEventType } from '../services/accounts/audit.service.js';

export const AuditEntry = Type.Object({
  id: Type.String(),
  at: IsoTime,
  type: Type.String(),
  actor: Type.Object({
    kind: Type.Union([Type.Literal('member'), Type.Literal('operator'), Type.Literal('system')]),
    member_id: Nullable(Type.String()),
    email: Nullable(Type.String()),
  }),
  client_ip: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  details: Type.Record(Type.String(), Type.Unknown()),
});
export type AuditEntry = Static<typeof AuditEntry>;

/** GET /audit: newest first. */
export const AuditPage = Type.Object({
  entries: Type.Array(AuditEntry),
  next_before: Nullable(Type.String()),
});
export type AuditPage = Static<typeof AuditPage>;

/** One of the signed-in member's sessions (GET /sessions). */
export const SessionItem = Type.Object({
  id: Type.String(),
  browser: Nullable(Type.String()),
  os: Nullable(Type.String()),
  device: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  client_ip: Nullable(Type.String()),
  created_at: IsoTime,
  last_seen_at: IsoTime,
  current: Type.Boolean(),
});
export type SessionItem = Static<typeof SessionItem>;

export const SessionList = Type.Object({ sessions: Type.Array(SessionItem) });
export type SessionList = Static<typeof SessionList>;

// ---- the operator console (docs/operators.md) ----------------------------------------------

export const OperatorAccount = Type.Object({
  id: Type.String(),
  email: Type.String(),
  plan: Type.String(),
  quota_limit: Nullable(Type.Integer()),
  rate_limit: Nullable(Type.Integer()),
  overage_enabled: Type.Boolean(),
  /** Whether overage is the account's own setting rather than its plan's. */
  overage_own: Type.Boolean(),
  usage: Type.Object({
    period_start: IsoTime,
    period_end: IsoTime,
    used: Type.Integer(),
    /** null: no quota. */
    limit: Nullable(Type.Integer()),
    overage_count: Type.Integer(),
  }),
  /** Active keys. */
  keys: Type.Integer(),
  /** Members, invited ones included. */
  members: Type.Integer(),
  created_at: IsoTime,
  suspended: Type.Boolean(),
  suspended_at: Nullable(IsoTime),
  suspended_reason: Nullable(Type.String()),
});
export type OperatorAccount = Static<typeof OperatorAccount>;

/** GET /operator/accounts: newest first, at most 1,000; `plans`: the plans an account can be on. */
export const OperatorAccountList = Type.Object({
  accounts: Type.Array(OperatorAccount),
  plans: Type.Array(Type.String()),
});
export type OperatorAccountList = Static<typeof OperatorAccountList>;

/** PATCH /operator/accounts/:id: what the CLI's `accounts` commands change; null limits: the plan's. */
export const OperatorAccountPatch = Type.Object(
  {
    plan: Type.Optional(Type.String({ maxLength: 50 })),
    quota_limit: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    rate_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    overage_enabled: Type.Optional(Nullable(Type.Boolean())),
    suspended: Type.Optional(Type.Boolean()),
    /** With `suspended: true`: shown to the account's members. */
    reason: Type.Optional(Nullable(Printable({ maxLength: 500 }))),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type OperatorAccountPatch = Static<typeof OperatorAccountPatch>;

/** POST /operator/accounts: a new account; its owner is invited at `email`. */
export const CreateOperatorAccountBody = Type.Object(
  {
    email: Printable({ minLength: 3, maxLength: 254 }),
    plan: Type.Optional(Type.String({ maxLength: 50 })),
    quota_limit: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    rate_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  },
  { additionalProperties: false },
);
export type CreateOperatorAccountBody = Static<typeof CreateOperatorAccountBody>;

/** The new account and its owner's one-time link: the only answer that carries it. */
export const CreatedOperatorAccount = Type.Object({
  account: OperatorAccount,
  owner_invitation: Type.Object({ link: Type.String(), expires_at: IsoTime, emailed: Type.Boolean() }),
});
export type CreatedOperatorAccount = Static<typeof CreatedOperatorAccount>;

/**
 * Whether the server's DNS resolver tells the truth (docs/operators.md): while not `trusted`,
 * answers that would say a domain does not exist are unknown / dns_error and batches wait.
 */
export const DnsResolverHealth = Type.Object({
  trusted: Type.Boolean(),
  /** off, unchecked, trusted, untrusted or unreachable. */
  state: Type.String(),
  reason: Nullable(Type.String()),
  checked_at: Nullable(IsoTime),
});
export type DnsResolverHealth = Static<typeof DnsResolverHealth>;

/** GET /operator/health. */
export const ServiceHealth = Type.Object({
  checked_at: IsoTime,
  jobs: Type.Object({
    queued: Type.Integer(),
    processing: Type.Integer(),
    completed: Type.Integer(),
    failed: Type.Integer(),
  }),
  /** Pending chunks of queued and processing jobs; `paused`: of suspended accounts. */
  chunks: Type.Object({ pending: Type.Integer(), paused: Type.Integer() }),
  /** Live worker processes, idle (`chunks` 0) or busy; the null fields: a lease holder without a row. */
  workers: Type.Object({
    live: Type.Array(
      Type.Object({
        worker_id: Type.String(),
        kind: Nullable(Type.Union([Type.Literal('embedded'), Type.Literal('worker')])),
        host: Nullable(Type.String()),
        pid: Nullable(Type.Integer()),
        version: Nullable(Type.String()),
        started_at: Nullable(IsoTime),
        last_heartbeat: IsoTime,
        chunks: Type.Integer(),
        /** Chunks it finished since it started, as of its last heartbeat. */
        chunks_done: Nullable(Type.Integer()),
      }),
    ),
    /** Workers that stopped beating without a clean stop in the last 24 hours. */
    lost_24h: Type.Integer(),
  }),
  deliveries: Type.Object({
    failed_24h: Type.Integer(),
    retrying: Type.Integer(),
    last_error: Nullable(Type.String()),
    last_at: Nullable(IsoTime),
  }),
  /** Null when the server has no reputation guard to ask. */
  egresses: Nullable(
    Type.Array(
      Type.Object({
        egress: Type.String(),
        state: Type.String(),
        since: Nullable(IsoTime),
        reason: Nullable(Type.String()),
      }),
    ),
  ),
  dns_resolver: DnsResolverHealth,
});
export type ServiceHealth = Static<typeof ServiceHealth>;

/** GET /service-status: what every member is told of the server's state (the shell's banner). */
export const ServiceStatus = Type.Object({ dns_resolver: DnsResolverHealth });
export type ServiceStatus = Static<typeof ServiceStatus>;

// ---- delivery outcomes and the accuracy report (issue 27; docs/outcomes.md) ------------------

const OutcomeTypeCounts = Type.Object({
  delivered: Type.Integer(),
  hard_bounce: Type.Integer(),
  soft_bounce: Type.Integer(),
  complaint: Type.Integer(),
  unsubscribed: Type.Integer(),
  opened: Type.Integer(),
  clicked: Type.Integer(),
});
export type OutcomeTypeCounts = Static<typeof OutcomeTypeCounts>;

/** GET /outcomes/intake?days=: how many days back, today included (default 30). */
export const OutcomeIntakeQuery = Type.Object(
  { days: Type.Optional(Type.Integer({ minimum: 1, maximum: 366 })) },
  { additionalProperties: false },
);
export type OutcomeIntakeQuery = Static<typeof OutcomeIntakeQuery>;

/** GET /outcomes/intake: what came in, per day of intake (newest first) and per source. */
export const OutcomeIntake = Type.Object({
  since: Type.String({ description: 'The first day counted, YYYY-MM-DD (UTC).' }),
  total: Type.Integer(),
  by_day: Type.Array(Type.Object({ day: Type.String(), total: Type.Integer(), by_type: OutcomeTypeCounts })),
  by_source: Type.Array(
    Type.Object({ source: Type.String(), total: Type.Integer(), by_type: OutcomeTypeCounts }),
  ),
});
export type OutcomeIntake = Static<typeof OutcomeIntake>;

/**
 * POST /outcomes/upload: the body is the file itself, its kind said by its Content-Type: `text/csv`
 * (address, type, optional at) or `application/mbox` (bounce messages). The answer:
 */
export const OutcomeUploadReport = Type.Object({
  kind: Type.Union([Type.Literal('csv'), Type.Literal('mbox')]),
  taken: Type.Integer(),
  duplicates: Type.Integer(),
  refused: Type.Integer(),
  refusals: Type.Array(
    Type.Object({
      /** The CSV row (from 1, a header row counted) or the mbox message (from 1). */
      item: Type.Integer(),
      reason: Type.Union([
        Type.Literal('invalid_email'),
        Type.Literal('invalid_type'),
        Type.Literal('invalid_at'),
        Type.Literal('expired'),
        Type.Literal('invalid_source_id'),
      ]),
      message: Type.String(),
    }),
  ),
  /** An mbox: its messages, the recipients that became no event, the messages that were no bounce. */
  mbox: Type.Optional(
    Type.Object({
      messages: Type.Integer(),
      ignored: Type.Array(
        Type.Object({
          item: Type.Integer(),
          email: Type.Optional(Type.String()),
          reason: Type.Union([
            Type.Literal('sender_policy'),
            Type.Literal('not_about_mailbox'),
            Type.Literal('unclassified'),
            Type.Literal('feedback_type'),
            Type.Literal('no_recipient'),
          ]),
          message: Type.String(),
        }),
      ),
      rejected: Type.Array(
        Type.Object({ item: Type.Integer(), error: Type.String(), message: Type.String() }),
      ),
    }),
  ),
});
export type OutcomeUploadReport = Static<typeof OutcomeUploadReport>;

/** GET /outcomes/report and GET /operator/outcomes/report: the period (both ends included). */
export const AccuracyQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ maxLength: 40 })),
    to: Type.Optional(Type.String({ maxLength: 40 })),
  },
  { additionalProperties: false },
);
export type AccuracyQuery = Static<typeof AccuracyQuery>;

const OutcomeFigures = {
  verified: Type.Integer(),
  sent: Type.Integer(),
  delivered: Type.Integer(),
  hard_bounced: Type.Integer(),
  bounce_rate: Nullable(Type.Number()),
};

/** The accuracy report, as GET /v1/account/outcomes answers it (docs/outcomes.md, "How accurate are we?"). */
export const AccuracyReport = Type.Object({
  from: IsoTime,
  to: IsoTime,
  totals: Type.Object(OutcomeFigures),
  by_status: Type.Array(Type.Object({ status: Type.String(), ...OutcomeFigures })),
  by_reason: Type.Array(
    Type.Object({ status: Type.String(), reason: Nullable(Type.String()), ...OutcomeFigures }),
  ),
  by_provider: Type.Array(Type.Object({ provider: Nullable(Type.String()), ...OutcomeFigures })),
  by_score_band: Type.Array(Type.Object({ min: Type.Integer(), max: Type.Integer(), ...OutcomeFigures })),
  reliability: Type.Array(
    Type.Object({
      min: Type.Integer(),
      max: Type.Integer(),
      n: Type.Integer(),
      delivered: Type.Integer(),
      hard_bounced: Type.Integer(),
      predicted: Nullable(Type.Number()),
      observed: Nullable(Type.Number()),
    }),
  ),
});
export type AccuracyReport = Static<typeof AccuracyReport>;

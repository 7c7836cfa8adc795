/**
 * Every path of the dashboard API (docs/dashboard.md) and what it answers, in one place: the
 * queries (queries.ts) and the pages' mutations call these functions and never spell a path.
 * The shapes are the contract's (src/dashboard/contract.ts), so a change there fails the web
 * typecheck here instead of in a page.
 */
import { useMemo } from 'react';
import type { ApiClient } from './client';
import type {
  AccuracyQuery,
  AccuracyReport,
  OutcomeIntake,
  OutcomeUploadReport,
  AuditPage,
  AuditQuery,
  ChangeEmailBody,
  ChangePasswordBody,
  ConfirmEmailBody,
  ConfirmEmailResult,
  EmailChangeResult,
  CreatedOperatorAccount,
  CreateOperatorAccountBody,
  OperatorAccount,
  OperatorAccountList,
  OperatorAccountPatch,
  ServiceHealth,
  ServiceStatus,
  CreatedKey,
  CreateKeyBody,
  CreatedOutcomeSource,
  CreateOutcomeSourceBody,
  OutcomeSourceList,
  CreateFilterBody,
  DisableTwoFactorBody,
  DownloadQuery,
  FilterItem,
  FilterList,
  ForgotPasswordBody,
  Invitation,
  InvitationPreview,
  InviteBody,
  JobDetail,
  JobItem,
  JobList,
  KeyItem,
  KeyList,
  ListHistory,
  MemberList,
  Overview,
  RecoveryCodes,
  ScheduleAnswer,
  ScheduleBody,
  SecondFactorBody,
  SecondFactorChallenge,
  SessionList,
  SessionView,
  SetPasswordBody,
  Settings,
  SettingsBody,
  SignInBody,
  TwoFactorCodeBody,
  TwoFactorEnrolment,
  TwoFactorRequirementBody,
  TwoFactorStatus,
  UploadQuery,
  VerificationResult,
  VerifyBody,
  WebhookSecret,
} from './contract';
import { useApi } from './services';

const segment = encodeURIComponent;

export function endpoints(api: ApiClient) {
  return {
    // ---- session and passwords
    session: () => api.request<SessionView>('/session'),
    /** A session, or (202) the challenge of a member with two factors. */
    signIn: (body: SignInBody) =>
      api.request<SessionView | SecondFactorChallenge>('/session', { method: 'POST', body }),
    secondFactor: (body: SecondFactorBody) =>
      api.request<SessionView>('/session/second-factor', { method: 'POST', body }),
    signOut: () => api.request<void>('/session', { method: 'DELETE' }),
    /** What every member is told of the server (the shell's banner). */
    serviceStatus: () => api.request<ServiceStatus>('/service-status'),
    invitation: (token: string) =>
      api.request<InvitationPreview>('/invitations/preview', { method: 'POST', body: { token } }),
    acceptInvitation: (body: SetPasswordBody) =>
      api.request<SessionView>('/invitations/accept', { method: 'POST', body }),
    /** Accepting as the signed-in person (who has a password already). */
    joinInvitation: (token: string) =>
      api.request<SessionView>('/invitations/join', { method: 'POST', body: { token } }),
    /** Acting in another of the person's accounts from now on. */
    switchAccount: (accountId: string) =>
      api.request<SessionView>('/session/account', { method: 'POST', body: { account_id: accountId } }),
    requestPasswordReset: (body: ForgotPasswordBody) =>
      api.request<void>('/password-resets', { method: 'POST', body }),
    acceptPasswordReset: (body: SetPasswordBody) =>
      api.request<SessionView | SecondFactorChallenge>('/password-resets/accept', { method: 'POST', body }),
    changePassword: (body: ChangePasswordBody) =>
      api.request<void>('/account/password', { method: 'POST', body }),
    changeEmail: (body: ChangeEmailBody) =>
      api.request<EmailChangeResult>('/account/email', { method: 'POST', body }),
    confirmEmailChange: (body: ConfirmEmailBody) =>
      api.request<ConfirmEmailResult>('/email-changes/accept', { method: 'POST', body }),

    // ---- two-factor sign-in
    twoFactor: () => api.request<TwoFactorStatus>('/account/two-factor'),
    startTwoFactor: () =>
      api.request<TwoFactorEnrolment>('/account/two-factor/enrolment', { method: 'POST' }),
    confirmTwoFactor: (body: TwoFactorCodeBody) =>
      api.request<RecoveryCodes>('/account/two-factor/enrolment/confirm', { method: 'POST', body }),
    disableTwoFactor: (body: DisableTwoFactorBody) =>
      api.request<void>('/account/two-factor/disable', { method: 'POST', body }),
    requireTwoFactor: (body: TwoFactorRequirementBody) =>
      api.request<TwoFactorStatus>('/account/two-factor/requirement', { method: 'PUT', body }),

    // ---- overview and verify
    overview: () => api.request<Overview>('/overview'),
    /** Verifications per day of the current and previous period, as CSV (a link the browser follows). */
    dailyUsageUrl: () => api.url('/overview/daily.csv'),
    verify: (body: VerifyBody) => api.request<VerificationResult>('/verify', { method: 'POST', body }),

    // ---- keys
    keys: () => api.request<KeyList>('/keys'),
    createKey: (body: CreateKeyBody) => api.request<CreatedKey>('/keys', { method: 'POST', body }),
    revokeKey: (keyId: string) => api.request<KeyItem>(`/keys/${segment(keyId)}/revoke`, { method: 'POST' }),
    rotateKey: (keyId: string) =>
      api.request<CreatedKey>(`/keys/${segment(keyId)}/rotate`, { method: 'POST' }),

    // ---- integrations: the mail systems' outcome webhooks
    outcomeSources: () => api.request<OutcomeSourceList>('/outcome-sources'),
    createOutcomeSource: (body: CreateOutcomeSourceBody) =>
      api.request<CreatedOutcomeSource>('/outcome-sources', { method: 'POST', body }),
    deleteOutcomeSource: (id: string) =>
      api.request<void>(`/outcome-sources/${segment(id)}`, { method: 'DELETE' }),
    // ---- filters (the account's allow and block lists)
    filters: () => api.request<FilterList>('/filters'),
    /** 201 the filter as stored (its value normalised); an existing (match, value) takes the new action. */
    createFilter: (body: CreateFilterBody) => api.request<FilterItem>('/filters', { method: 'POST', body }),
    deleteFilter: (filterId: string) =>
      api.request<FilterItem>(`/filters/${segment(filterId)}`, { method: 'DELETE' }),

    // ---- lists (batch jobs)
    jobs: (cursor: string | null) =>
      api.request<JobList>('/jobs', { query: { cursor: cursor ?? undefined } }),
    job: (jobId: string) => api.request<JobDetail>(`/jobs/${segment(jobId)}`),
    cancelJob: (jobId: string) => api.request<JobItem>(`/jobs/${segment(jobId)}/cancel`, { method: 'POST' }),
    /** A link the browser follows itself (the CSV download). */
    downloadUrl: (jobId: string, query: DownloadQuery) => api.url(`/jobs/${segment(jobId)}/download`, query),
    /** Re-verify the job's list every N days, or stop (null). */
    setSchedule: (jobId: string, body: ScheduleBody) =>
      api.request<ScheduleAnswer>(`/jobs/${segment(jobId)}/schedule`, { method: 'PUT', body }),
    history: (jobId: string) => api.request<ListHistory>(`/jobs/${segment(jobId)}/history`),
    /** A link the browser follows itself (the changed rows of a scheduled run, CSV). */
    changesUrl: (jobId: string) => api.url(`/jobs/${segment(jobId)}/changes`),
    /** The list as CSV text; the query says how to read it. */
    uploadList: (query: UploadQuery, csv: Blob) =>
      api.request<JobItem>('/lists', { method: 'POST', query, body: csv, contentType: 'text/csv' }),

    // ---- delivery outcomes and the accuracy report
    outcomeIntake: (days: number) =>
      api.request<OutcomeIntake>('/outcomes/intake', { query: { days: String(days) } }),
    /** The file itself; an .mbox goes as bounce messages, anything else as CSV. */
    uploadOutcomes: (file: Blob, kind: 'csv' | 'mbox') =>
      api.request<OutcomeUploadReport>('/outcomes/upload', {
        method: 'POST',
        body: file,
        contentType: kind === 'mbox' ? 'application/mbox' : 'text/csv',
      }),
    outcomesReport: (query: AccuracyQuery) => api.request<AccuracyReport>('/outcomes/report', { query }),

    // ---- settings
    members: () => api.request<MemberList>('/members'),
    invite: (body: InviteBody) => api.request<Invitation>('/members', { method: 'POST', body }),
    removeMember: (memberId: string) =>
      api.request<void>(`/members/${segment(memberId)}`, { method: 'DELETE' }),
    settings: () => api.request<Settings>('/settings'),
    saveSettings: (body: SettingsBody) => api.request<Settings>('/settings', { method: 'PUT', body }),
    revealWebhookSecret: () =>
      api.request<WebhookSecret>('/settings/webhook-secret/reveal', { method: 'POST' }),
    rotateWebhookSecret: () =>
      api.request<WebhookSecret>('/settings/webhook-secret/rotate', { method: 'POST' }),

    // ---- sessions and the security log
    sessions: () => api.request<SessionList>('/sessions'),
    endSession: (id: string) => api.request<void>(`/sessions/${segment(id)}`, { method: 'DELETE' }),
    audit: (query: AuditQuery) => api.request<AuditPage>('/audit', { query }),
    /** A link the browser follows itself (the CSV download). */
    auditCsvUrl: (query: Pick<AuditQuery, 'type' | 'member'>) => api.url('/audit.csv', query),

    // ---- the operator console (operators only: 404 for everyone else)
    operatorAccounts: () => api.request<OperatorAccountList>('/operator/accounts'),
    changeAccount: (accountId: string, body: OperatorAccountPatch) =>
      api.request<OperatorAccount>(`/operator/accounts/${segment(accountId)}`, { method: 'PATCH', body }),
    createAccount: (body: CreateOperatorAccountBody) =>
      api.request<CreatedOperatorAccount>('/operator/accounts', { method: 'POST', body }),
    serviceHealth: () => api.request<ServiceHealth>('/operator/health'),
    /** Every account's verdicts against their outcomes, in aggregate. */
    operatorOutcomesReport: (query: AccuracyQuery) =>
      api.request<AccuracyReport>('/operator/outcomes/report', { query }),
  };
}

export type Endpoints = ReturnType<typeof endpoints>;

/** The endpoints over the app's API client. */
export function useEndpoints(): Endpoints {
  const api = useApi();
  return useMemo(() => endpoints(api), [api]);
}

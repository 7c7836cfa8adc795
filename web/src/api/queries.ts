/**
 * The dashboard's server state through TanStack Query: one key per resource, polling where the
 * server changes state on its own (usage, running jobs), and mutations that invalidate what they
 * change, so no page needs a reload to show the new state.
 */
import { useInfiniteQuery, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { ApiError } from './client';
import type { JobItem, SecondFactorChallenge, SessionView } from './contract';
import { useEndpoints } from './endpoints';

export const keys = {
  session: ['session'] as const,
  overview: ['overview'] as const,
  apiKeys: ['keys'] as const,
  outcomeSources: ['outcome-sources'] as const,
  filters: ['filters'] as const,
  jobs: ['jobs'] as const,
  job: (id: string) => ['jobs', id] as const,
  history: (id: string) => ['jobs', id, 'history'] as const,
  members: ['members'] as const,
  settings: ['settings'] as const,
  twoFactor: ['two-factor'] as const,
  operatorAccounts: ['operator', 'accounts'] as const,
  serviceHealth: ['operator', 'health'] as const,
  serviceStatus: ['service-status'] as const,
  outcomeIntake: (days: number) => ['outcomes', 'intake', days] as const,
  outcomesReport: (days: number) => ['outcomes', 'report', days] as const,
  operatorOutcomesReport: (days: number) => ['operator', 'outcomes', days] as const,
  /** A sign-in waiting for its second factor (after a reset link, for the sign-in page). */
  pendingChallenge: ['second-factor-challenge'] as const,
};

/** Usage changes with every verification, made here or through the API. */
export const OVERVIEW_POLL_MS = 10_000;
/** A running job's progress. */
export const JOB_POLL_MS = 1_500;

const ACTIVE = new Set(['queued', 'processing']);
export const isActive = (job: Pick<JobItem, 'status'>): boolean => ACTIVE.has(job.status);

/** The signed-in member's session, or null when there is none. */
export function useSession() {
  const api = useEndpoints();
  return useQuery({
    queryKey: keys.session,
    queryFn: async (): Promise<SessionView | null> => {
      try {
        return await api.session();
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return null;
        throw error;
      }
    },
    staleTime: 60_000,
    retry: false,
  });
}

/** How often the shell asks whether the server's DNS resolver is trusted (it re-checks every 30 s while not). */
export const SERVICE_STATUS_POLL_MS = 30_000;

/** What every member is told of the server: whether its DNS resolver is trusted (the shell's banner). */
export function useServiceStatus() {
  const api = useEndpoints();
  return useQuery({
    queryKey: keys.serviceStatus,
    queryFn: () => api.serviceStatus(),
    refetchInterval: SERVICE_STATUS_POLL_MS,
    retry: false,
  });
}

/** Whether a sign-in answer asks for the second factor instead of opening a session. */
export function isChallenge(answer: SessionView | SecondFactorChallenge): answer is SecondFactorChallenge {
  return 'second_factor_required' in answer;
}

/** The member's second factor. */
export function useTwoFactor() {
  const api = useEndpoints();
  return useQuery({ queryKey: keys.twoFactor, queryFn: api.twoFactor });
}

/** After sign-in (or an accepted invitation): forget the previous member's data, keep the new session. */
export function startSession(client: QueryClient, session: SessionView): void {
  client.removeQueries({ predicate: (query) => query.queryKey[0] !== keys.session[0] });
  client.setQueryData(keys.session, session);
}

/** After sign-out or a lost session. */
export function endSession(client: QueryClient): void {
  client.removeQueries({ predicate: (query) => query.queryKey[0] !== keys.session[0] });
  client.setQueryData(keys.session, null);
}

export function useOverview() {
  const api = useEndpoints();
  return useQuery({
    queryKey: keys.overview,
    queryFn: api.overview,
    refetchInterval: OVERVIEW_POLL_MS,
  });
}

export function useKeys() {
  const api = useEndpoints();
  return useQuery({ queryKey: keys.apiKeys, queryFn: api.keys });
}

export function useOutcomeSources() {
  const api = useEndpoints();
  return useQuery({ queryKey: keys.outcomeSources, queryFn: api.outcomeSources });
}

export function useFilters() {
  const api = useEndpoints();
  return useQuery({ queryKey: keys.filters, queryFn: api.filters });
}

export function useJobs() {
  const api = useEndpoints();
  return useInfiniteQuery({
    queryKey: keys.jobs,
    queryFn: ({ pageParam }) => api.jobs(pageParam),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    refetchInterval: (query) =>
      query.state.data?.pages.some((page) => page.jobs.some(isActive)) ? JOB_POLL_MS : false,
  });
}

export function useJob(id: string) {
  const api = useEndpoints();
  return useQuery({
    queryKey: keys.job(id),
    queryFn: () => api.job(id),
    refetchInterval: (query) => (query.state.data && isActive(query.state.data.job) ? JOB_POLL_MS : false),
  });
}

/** A list's runs; polled while one of them runs. */
export function useListHistory(id: string) {
  const api = useEndpoints();
  return useQuery({
    queryKey: keys.history(id),
    queryFn: () => api.history(id),
    refetchInterval: (query) =>
      query.state.data?.runs.some((r) => r.status === 'queued' || r.status === 'processing')
        ? JOB_POLL_MS
        : false,
  });
}

export function useMembers() {
  const api = useEndpoints();
  return useQuery({ queryKey: keys.members, queryFn: api.members });
}

export function useSettings() {
  const api = useEndpoints();
  return useQuery({ queryKey: keys.settings, queryFn: api.settings });
}

/** Invalidates every query under these keys (the usual end of a mutation). */
export function useInvalidate() {
  const client = useQueryClient();
  return (...queryKeys: (readonly unknown[])[]) =>
    Promise.all(queryKeys.map((queryKey) => client.invalidateQueries({ queryKey })));
}

/** The period of an accuracy report: the last `days` days, to now. */
const lastDays = (days: number) => ({ from: new Date(Date.now() - days * 86_400_000).toISOString() });

/** What came in over the last `days` days, per day and source. */
export function useOutcomeIntake(days: number) {
  const api = useEndpoints();
  return useQuery({ queryKey: keys.outcomeIntake(days), queryFn: () => api.outcomeIntake(days) });
}

/** The account's accuracy report over the last `days` days. */
export function useOutcomesReport(days: number) {
  const api = useEndpoints();
  return useQuery({ queryKey: keys.outcomesReport(days), queryFn: () => api.outcomesReport(lastDays(days)) });
}

/** Every account's accuracy report, in aggregate (operators only). */
export function useOperatorOutcomesReport(days: number) {
  const api = useEndpoints();
  return useQuery({
    queryKey: keys.operatorOutcomesReport(days),
    queryFn: () => api.operatorOutcomesReport(lastDays(days)),
  });
}

/**
 * Lists: upload a list to clean (upload.tsx) and the account's jobs, newest first, with live
 * progress (polled every 1.5 s while one is queued or processing) and a way to stop a running one.
 *
 * Accessible names: heading "Lists"; headings "Upload a list" and "Your lists"; table "Your
 * lists" with links named after each list, progress bars "Progress of <list>", buttons
 * "Stop <list>"; button "Load more".
 */
import { useJobs, isActive } from '../api/queries';
import { PageTitle } from '../components/shell';
import { EmptyState, ErrorMessage, Loading } from '../components/status';
import { CancelJobButton } from './cancel-job';
import { JobsTable } from './jobs-table';
import { UploadList } from './upload';

export function ListsPage() {
  const jobs = useJobs();
  const all = jobs.data?.pages.flatMap((page) => page.jobs) ?? [];
  return (
    <>
      <PageTitle title="Lists">Lists</PageTitle>
      <section className="panel" aria-labelledby="upload-title">
        <h2 id="upload-title">Upload a list</h2>
        <UploadList />
      </section>
      <section className="panel" aria-labelledby="jobs-title">
        <h2 id="jobs-title">Your lists</h2>
        {jobs.isPending ? <Loading what="your lists" /> : null}
        {jobs.isError && !jobs.data ? (
          <ErrorMessage action="Could not load the lists" error={jobs.error} />
        ) : null}
        {jobs.data && all.length === 0 ? (
          <EmptyState>
            <p>No lists yet. Upload one above: results keep your file’s other columns.</p>
          </EmptyState>
        ) : null}
        {all.length > 0 ? (
          <JobsTable
            jobs={all}
            caption="Your lists"
            actions={(job) => (isActive(job) ? <CancelJobButton job={job} /> : null)}
          />
        ) : null}
        {jobs.hasNextPage ? (
          <button
            type="button"
            className="button"
            onClick={() => void jobs.fetchNextPage()}
            disabled={jobs.isFetchingNextPage}
          >
            {jobs.isFetchingNextPage ? 'Loading…' : 'Load more'}
          </button>
        ) : null}
      </section>
    </>
  );
}

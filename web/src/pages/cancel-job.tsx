import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { JobItem } from '../api/contract';
import { keys, useInvalidate } from '../api/queries';
import { useEndpoints } from '../api/endpoints';
import { ConfirmDialog } from '../components/dialog';
import { ErrorMessage } from '../components/status';
import { jobName } from './jobs-table';

/**
 * "Stop <list>" with its confirmation: the job is cancelled and its unverified addresses are
 * refunded to the quota. Accessible names: button "Stop <list>" (or `label`), dialog "Stop the
 * list <list>?" with buttons "Stop the job" and "Keep it running".
 */
export function CancelJobButton({ job, label }: { job: JobItem; label?: string }) {
  const api = useEndpoints();
  const invalidate = useInvalidate();
  const [confirming, setConfirming] = useState(false);
  const cancel = useMutation({
    mutationFn: () => api.cancelJob(job.job_id),
    onSuccess: async () => {
      setConfirming(false);
      await invalidate(keys.jobs, keys.overview);
    },
  });
  return (
    <>
      <button
        type="button"
        className="button button-small button-danger-outline"
        aria-label={label ?? `Stop ${jobName(job)}`}
        onClick={() => setConfirming(true)}
      >
        {label ?? 'Stop'}
      </button>
      {confirming ? (
        <ConfirmDialog
          title={`Stop the list ${jobName(job)}?`}
          confirm="Stop the job"
          cancel="Keep it running"
          busy={cancel.isPending}
          onCancel={() => {
            setConfirming(false);
            cancel.reset();
          }}
          onConfirm={() => cancel.mutate()}
          error={<ErrorMessage action="Could not stop the job" error={cancel.error} />}
        >
          <p>
            Addresses not verified yet are not verified and are refunded to the quota. Results so far can
            still be downloaded.
          </p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

/** The runtime's durable job: execute one agent run (`runtime.run`, one job per run). */
import type { JobQueue } from '../../jobs/queue.ts';
import type { RuntimeService } from './runtime.service.ts';
import type { ApprovalNotice, ApprovalsService, ApprovalView } from './approvals.service.ts';

/**
 * Runs executing at once in this process (job pollers, one run each). A send wakes the pollers at once, here
 * and on the other instances (the event bus), and a poller that found work looks again at once; the polling
 * interval only bounds how late a retry or a wake-up lost in transit is noticed, so it is long: 16 pollers
 * polling every 0.5 s cost the embedded database ~32 queries a second at idle.
 */
export const RUN_CONCURRENCY = 16;

/**
 * The runtime's jobs: `runtime.run` (execute one run), `approvals.expire` (an approval still pending after
 * `APPROVAL_TIMEOUT_S`, sent delayed when it was asked; one instance takes it) and `approvals.notify` (tell the
 * owner about a new approval: `email` through the mailer, `messenger` through `messenger.requested`, the
 * messenger area's sender; `messenger_decided` edits the request's message after a decision made elsewhere;
 * each retried on its own when the messenger fails).
 */
export function registerRuntimeJobs(
  jobs: JobQueue,
  runtime: Pick<RuntimeService, 'execute'>,
  approvals: Pick<ApprovalsService, 'expire' | 'notice' | 'mailOwner' | 'view'>,
  messenger: {
    requested: (notice: ApprovalNotice) => Promise<void>;
    decided: (approval: ApprovalView) => Promise<void>;
  },
): void {
  jobs.define(
    'approvals.notify',
    async (data) => {
      if (data.channel === 'email') return approvals.mailOwner(data.approval_id, data.worker);
      if (data.channel === 'messenger_decided') {
        const a = await approvals.view(data.approval_id);
        if (a && a.status !== 'pending') await messenger.decided(a);
        return;
      }
      const notice = await approvals.notice(data.approval_id, data.worker);
      if (notice) await messenger.requested(notice);
    },
    { retryLimit: 3, retryDelay: 10, pollingIntervalSeconds: 5 },
  );
  jobs.define(
    'approvals.expire',
    async (data) => {
      await approvals.expire(data.approval_id);
    },
    { pollingIntervalSeconds: 5 },
  );
  jobs.define('runtime.run', (data, ctx) => runtime.execute(data.run_id, ctx.id), {
    concurrency: RUN_CONCURRENCY,
    retryLimit: 2,
    retryDelay: 5,
    expireInSeconds: 3600,
    pollingIntervalSeconds: 5,
  });
}

/** Approvals of a project: tool calls of runs waiting for a person; list and decide (keys: `approvalKeys`). */
import { queryOptions } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { msg } from '../../i18n';
import { projectKeys } from '../projects/api';
import { runKeys } from '../runs/api';
import { useInvalidatingMutation } from '../mutation';

type Status = 'pending' | 'approved' | 'denied' | 'expired';

/** Query keys of approvals. */
export const approvalKeys = {
  all: (project: string) => [...projectKeys.one(project), 'approvals'] as const,
  list: (project: string, status?: Status) => [...approvalKeys.all(project), status ?? 'any'] as const,
};

const listApprovals = (project: string, status?: Status) =>
  must(
    api.GET('/api/crm/projects/{name}/approvals', {
      params: { path: { name: project }, query: status ? { status } : {} },
    }),
  );

/** An approval as the service shows it. */
export type Approval = Awaited<ReturnType<typeof listApprovals>>['approvals'][number];

/** The words of each approval status (translated where shown). */
export const APPROVAL_STATUS_LABELS: Record<Status, string> = {
  pending: msg('Pending'),
  approved: msg('Approved'),
  denied: msg('Denied'),
  expired: msg('Expired'),
};

/** The project's approvals (newest first, at most 200), of one status when given; pending ones refreshed every 5 s. */
export const approvalsQuery = (project: string, status?: Status) =>
  queryOptions({
    queryKey: approvalKeys.list(project, status),
    queryFn: () => listApprovals(project, status),
    refetchInterval: status === 'pending' ? 5000 : false,
  });

interface Decision {
  id: number;
  decision: 'approve' | 'deny';
  reason?: string;
}

/** Approve or deny a pending call (the run resumes); refreshes approvals and runs. */
export function useDecideApproval(project: string, after?: { onSuccess?: (a: Approval, d: Decision) => void }) {
  return useInvalidatingMutation(
    ({ id, ...body }: Decision) =>
      must(api.POST('/api/crm/projects/{name}/approvals/{id}', { params: { path: { name: project, id } }, body })),
    () => [approvalKeys.all(project), runKeys.all(project)],
    after,
  );
}

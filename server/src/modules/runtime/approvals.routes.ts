/**
 * Routes of approvals (docs/api.md, Approvals): list a project's approvals, decide one. The owner of the project
 * or an admin; the service holds the rules (approvals.service.ts).
 */
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import type { ApprovalsService } from './approvals.service.ts';
import { NameParam } from './runtime.schemas.ts';
import * as S from './approvals.schemas.ts';

export function approvalsRoutes(app: TypedApp, { approvals }: { approvals: ApprovalsService }): void {
  const tags = ['workers'];
  app.get(
    '/api/crm/projects/:name/approvals',
    {
      schema: {
        tags,
        summary: "The project's approvals (tool calls of runs waiting for a person), newest first",
        description: 'Optional filter `status` (pending, approved, denied, expired); at most 200.',
        params: NameParam,
        querystring: S.ApprovalsQuery,
        response: { 200: S.ApprovalList, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => approvals.list(requireActor(req), req.params.name, req.query.status),
  );
  app.post(
    '/api/crm/projects/:name/approvals/:id',
    {
      schema: {
        tags,
        summary: 'Approve or deny a pending tool call; the run resumes',
        description:
          'Approve: the call runs once and the run goes on. Deny: the model is told the call was refused, with `reason`. 409 `approval_decided` (with the first decision as `approval`) when it was already decided or expired.',
        params: S.ApprovalParams,
        body: S.DecisionBody,
        response: { 200: S.Approval, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => approvals.decide(requireActor(req), req.params.name, req.params.id, req.body),
  );
}

/**
 * The issues area as the agent's tools see it (runtime/ports.ts `IssuesPort`): each call acts through the
 * issues service with the project owner's authority (`access.ownerActor`), never beyond that project, and
 * credits the worker that acted (its label as `created_by` and entry author; its id on the events).
 */
import type { Access } from '../../access/access.ts';
import type { IssuePriority, IssueStatus } from '../../db/types.ts';
import { BadRequest } from '../../http/errors.ts';
import type { IssuesPort } from '../runtime/ports.ts';
import type { IssuesService } from './issues.service.ts';

/** The issues port over the issues service (built once by services.ts). */
export function createIssuesPort(deps: {
  issues: Pick<IssuesService, 'create' | 'mcpUpdate' | 'update' | 'log'>;
  access: Pick<Access, 'ownerActor'>;
}): IssuesPort {
  const { issues } = deps;
  const summary = (i: {
    id: number;
    title: string;
    status: IssueStatus;
    assignee: string | null;
    priority: string | null;
  }) => ({ id: i.id, title: i.title, status: i.status, assignee: i.assignee, priority: i.priority });
  const priority = (p?: string): IssuePriority | undefined => {
    if (p === undefined || p === '') return undefined;
    const up = p.toUpperCase();
    if (!/^P[0-3]$/.test(up)) throw new BadRequest('invalid_priority', 'Priority must be one of P0, P1, P2, P3.');
    return up as IssuePriority;
  };
  return {
    async create(p) {
      const { actor, projectName } = await deps.access.ownerActor(p.projectId);
      return summary(
        await issues.create(
          actor,
          projectName,
          {
            title: p.title,
            description: p.description,
            priority: priority(p.priority),
            originKey: p.key,
          },
          p.author,
        ),
      );
    },
    async take(p) {
      const { actor, projectName } = await deps.access.ownerActor(p.projectId);
      return summary(
        await issues.mcpUpdate(actor, projectName, p.issueId, {
          status: 'in_progress',
          assignee: p.assignee,
          author: p.assignee,
        }),
      );
    },
    async update(p) {
      const { actor, projectName } = await deps.access.ownerActor(p.projectId);
      return summary(
        await issues.update(
          actor,
          projectName,
          p.issueId,
          {
            status: p.status,
            assignee: p.assignee,
            title: p.title,
            priority: priority(p.priority),
            description: p.description,
          },
          p.author,
        ),
      );
    },
    async log(p) {
      const { actor, projectName } = await deps.access.ownerActor(p.projectId);
      await issues.log(actor, projectName, p.issueId, { message: p.message, author: p.author });
      return { ok: true };
    },
  };
}

/**
 * Who may act on what (docs/api.md, Roles and access). `canAccessProject`: the owner or an admin.
 * Every project-scoped service method starts with `access.project(actor, name)`.
 */
import type { Kysely } from 'kysely';
import path from 'node:path';
import type { DB } from '../db/types.ts';
import { actorFromUser, type Actor } from '../http/auth.ts';
import { Forbidden, NotFound } from '../http/errors.ts';

export interface ProjectRef {
  id: number;
  owner_id: number;
  name: string;
  display_name: string;
  trial_mode: boolean;
  config: Record<string, unknown>;
  /** Absolute working directory of the project. */
  dir: string;
}

/**
 * The admin rule (docs/api.md, Roles and access), checked first in every admin-only service method, not only on
 * the route. @throws Forbidden 403 `admin_required`.
 */
export function requireAdmin(actor: Pick<Actor, 'isAdmin'>): void {
  if (!actor.isAdmin) throw new Forbidden('This action needs an administrator.', 'admin_required');
}

/**
 * Owner or admin may change a record (a project, a published global skill, a template).
 * @throws Forbidden 403 with `code` otherwise.
 */
export function requireOwnerOrAdmin(
  actor: Pick<Actor, 'id' | 'isAdmin'>,
  ownerId: number | null,
  message = 'Only its owner or an administrator may change this.',
  code = 'forbidden',
): void {
  if (!actor.isAdmin && ownerId !== actor.id) throw new Forbidden(message, code);
}

/** Pure rule: owner or admin. */
export function canAccessProject(actor: Pick<Actor, 'id' | 'isAdmin'>, project: { owner_id: number }): boolean {
  return actor.isAdmin || project.owner_id === actor.id;
}

export interface Access {
  /**
   * Resolve the project `name` for `actor` (a name names one project across the service): the project when
   * the actor owns it or is an admin.
   * @throws NotFound `project_not_found` when no project has that name; Forbidden 403 `forbidden` when it
   *   belongs to someone else, `token_project` when the caller's access token is bound to another project.
   */
  project(actor: Actor, name: string): Promise<ProjectRef>;
  /**
   * `project`, for the request pipeline's authorization step (http/authorize.ts): the answer is also kept for the
   * next `project(actor, name)` of the same request (the same `actor` object, made per request), once, so the
   * service's own first line does not read the project again. Nothing outlives the request: the next call reads
   * the database again. @throws as `project`.
   */
  authorize(actor: Actor, name: string): Promise<ProjectRef>;
  /** Working directory of a project id under DATA_DIR. */
  projectDir(projectId: number): string;
  /**
   * The owner of project `projectId` as an Actor, with the project's name: for work done on the
   * project's behalf (a worker's agent run acts with its owner's authority, never beyond that project).
   * @throws NotFound when the project no longer exists.
   */
  ownerActor(projectId: number): Promise<{ actor: Actor; projectName: string }>;
}

export function createAccess(db: Kysely<DB>, dataDir: string): Access {
  const projectDir = (id: number) => path.join(dataDir, 'projects', String(id));
  /** The project the authorization step resolved for a request's actor, taken by that request's next `project`. */
  const authorized = new WeakMap<Actor, ProjectRef>();
  async function project(actor: Actor, name: string): Promise<ProjectRef> {
    const kept = authorized.get(actor);
    if (kept) {
      authorized.delete(actor);
      if (kept.name === name) return kept;
    }
    const row = await db
      .selectFrom('projects')
      .select(['id', 'owner_id', 'name', 'display_name', 'trial_mode', 'config'])
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) throw new NotFound(`Project '${name}' was not found.`, 'project_not_found');
    if (!canAccessProject(actor, row)) throw new Forbidden('You do not have access to this project.', 'forbidden');
    // An access token bound to one project reaches no other (docs/api.md, Access tokens).
    if (actor.grant && actor.grant.projectId !== null && actor.grant.projectId !== row.id)
      throw new Forbidden(`This token is limited to the project ${actor.grant.projectName}.`, 'token_project');
    return { ...row, config: (row.config ?? {}) as Record<string, unknown>, dir: projectDir(row.id) };
  }
  return {
    projectDir,
    project,
    async authorize(actor, name) {
      const p = await project(actor, name);
      authorized.set(actor, p);
      return p;
    },
    async ownerActor(projectId) {
      const row = await db
        .selectFrom('projects')
        .innerJoin('users', 'users.id', 'projects.owner_id')
        .select([
          'projects.name as projectName',
          'users.id',
          'users.email',
          'users.name',
          'users.role',
          'users.plan',
          'users.email_verified',
          'users.chat_id',
          'users.created_at',
        ])
        .where('projects.id', '=', projectId)
        .executeTakeFirst();
      if (!row) throw new NotFound('The project of this run no longer exists.', 'project_not_found');
      // The owner's own rights, never an admin's: a run acts inside its project only.
      return { actor: { ...actorFromUser(row), isAdmin: false }, projectName: row.projectName };
    },
  };
}

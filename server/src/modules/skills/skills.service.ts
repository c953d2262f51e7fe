/**
 * Skills (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings). Bodies are `{name, description, content,
 * reason?}`; answers are the skill with `id`, `owner_project` (the project's name, null for a global skill) and
 * `created_by`.
 *
 * - A skill is global (`owner_project` null) or belongs to one project; a project sees the global skills
 *   plus its own, never another project's.
 * - Who writes what: any user reads and publishes global skills; a global skill records who published it
 *   (`created_by`), and only that user or an admin changes or deletes it (403 `forbidden` otherwise). A
 *   project's skills (and forks) are written by whoever may act on the project (owner or admin).
 * - Every change is kept as a version (`skill_versions`: author, reason) → `GET /skills/:id/evolution`.
 * - A fork is a project skill copied from a global one (`forked_from`, `forked_version`). When the global
 *   skill gets a new version, each fork is offered it (`skill_updates`, one pending offer per fork, kept at
 *   the newest version); approve replaces the fork's description and content with the offered version
 *   (its name stays) as a new fork version; reject dismisses the offer.
 * - The database is authoritative. After each committed change the skill's file is written for the agent
 *   CLI: `<project dir>/.skills/<name>/SKILL.md` (front matter `name`, `description`), global skills under
 *   `<DATA_DIR>/skills/<name>/SKILL.md`; a rename or delete removes the old folder. File failures are
 *   logged (the database row stays authoritative and the next save rewrites the file).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Static } from 'typebox';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import { type Access, type ProjectRef, requireOwnerOrAdmin } from '../../access/access.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { LoadedDocument } from '../../lib/doc-sources.ts';
import { BadRequest, Conflict, Forbidden, NotFound, PayloadTooLarge } from '../../http/errors.ts';
import { atomicWrite } from '../../lib/atomic-write.ts';
import { resolveInside } from '../../lib/paths.ts';
import type { ProjectsRepo } from '../projects/projects.repo.ts';
import type { SkillsRepo, UpdateStatus } from './skills.repo.ts';
import { MAX_PUBLISHED_CONTENT, MAX_PUBLISHED_PER_USER, publishRefusal, skillFile } from './skills.rules.ts';
import type * as S from './skills.schemas.ts';

export interface SkillsDeps {
  repo: SkillsRepo;
  /** The projects area: names and owners of projects (owning projects, access), an owner's projects (updates). */
  projects: Pick<ProjectsRepo, 'namesAndOwners' | 'ownerProjectIds'>;
  access: Access;
  jobs: JobQueue;
  dataDir: string;
  log: { warn: (o: object, m: string) => void };
}

/** A skill as the API shows it (skills.schemas.ts `Skill`; `owner_project` is the project's name). */
export type Skill = Static<typeof S.Skill>;
/** A skill as stored: `owner_project` is the project id. */
type StoredSkill = NonNullable<Awaited<ReturnType<SkillsRepo['byId']>>>;
/** A skill read by the service: `owner_project` is the project id, `project_name` its name. */
type SkillRow = StoredSkill & { project_name: string | null };

const actorName = (actor: Actor) => actor.name || actor.email || `user ${actor.id}`;
const notFound = () => new NotFound('Skill not found.', 'skill_not_found');

/** The skills service (see the module comment); built once by services.ts. */
export function createSkillsService(deps: SkillsDeps) {
  const { repo } = deps;
  const globalDir = path.join(deps.dataDir, 'skills');

  /** Rows with the names of their owning projects (outside a transaction: the projects area reads on its own). */
  async function named(rows: StoredSkill[]): Promise<SkillRow[]> {
    const ids = [...new Set(rows.flatMap((r) => (r.owner_project === null ? [] : [r.owner_project])))];
    const projects = await deps.projects.namesAndOwners(ids);
    return rows.map((r) => ({
      ...r,
      project_name: r.owner_project === null ? null : (projects.get(r.owner_project)?.name ?? null),
    }));
  }
  const out = ({ project_name, ...r }: SkillRow): Skill => ({ ...r, owner_project: project_name });
  const ownerOf = async (projectId: number) =>
    (await deps.projects.namesAndOwners([projectId])).get(projectId)?.owner_id ?? null;

  async function row(id: number): Promise<SkillRow | undefined> {
    const r = await repo.byId(id);
    return r ? (await named([r]))[0] : undefined;
  }

  /**
   * Where a skill's files go, relative to `<DATA_DIR>/skills` (global) or to the project directory, where the
   * path must stay inside (lib/paths.ts; a `.skills` link leading elsewhere is refused, and logged by the caller).
   * @param opts.create create a missing project directory (to write); without it a missing one throws ENOENT.
   */
  async function pathOf(s: { owner_project: number | null; name: string }, file: string, opts = { create: true }) {
    if (s.owner_project === null) return path.join(globalDir, s.name, file);
    const rel = path.posix.join('.skills', s.name, file);
    return (await resolveInside(deps.access.projectDir(s.owner_project), rel, opts)).abs;
  }

  async function syncFile(after: SkillRow | null, before: { owner_project: number | null; name: string } | null) {
    try {
      if (before && (!after || after.name !== before.name)) {
        const dir = await pathOf(before, '', { create: false }).catch((err) => {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null; // the project directory is gone
          throw err;
        });
        if (dir) await fs.rm(dir, { recursive: true, force: true });
      }
      if (after) await atomicWrite(await pathOf(after, 'SKILL.md'), skillFile(after));
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'skill file not synced');
    }
  }

  const index = (tx: Transaction<DB>, ownerProject: number | null, id: number) =>
    deps.jobs.send('knowledge.index', { project_id: ownerProject, doc_type: 'skill', doc_id: String(id) }, { tx });

  const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

  /**
   * The publishing bounds of a global skill (skills.rules.ts), checked under the publisher's lock.
   * @param counting true for a new skill (the number of published skills is bounded), false for a change.
   * @throws PayloadTooLarge 413 `skill_too_large`; Forbidden 403 `publish_limit`.
   */
  async function checkPublish(tx: Transaction<DB>, actor: Actor, content: string, counting: boolean) {
    const published = counting ? await repo.lockAndCountPublished(tx, actor.id) : 0;
    const refusal = publishRefusal({ published, contentLength: content.length, isAdmin: actor.isAdmin });
    if (refusal === 'skill_too_large')
      throw new PayloadTooLarge(
        `A global skill holds at most ${MAX_PUBLISHED_CONTENT} characters; keep longer instructions in a project skill.`,
        'skill_too_large',
        { limit: MAX_PUBLISHED_CONTENT },
      );
    if (refusal === 'publish_limit')
      throw new Forbidden(
        `You have published ${MAX_PUBLISHED_PER_USER} global skills, the most one user may; delete one first.`,
        'publish_limit',
        { limit: MAX_PUBLISHED_PER_USER },
      );
  }

  async function insertSkill(
    actor: Actor,
    ownerProject: number | null,
    body: { name: string; description?: string; content?: string; reason?: string },
    fork?: { from: number; version: number },
  ): Promise<Skill> {
    let stored: StoredSkill;
    try {
      stored = await repo.transaction(async (tx) => {
        if (ownerProject === null) await checkPublish(tx, actor, body.content ?? '', true);
        const id = await repo.insert(tx, {
          ownerProject,
          name: body.name,
          description: body.description ?? '',
          content: body.content ?? '',
          forkedFrom: fork?.from ?? null,
          forkedVersion: fork?.version ?? null,
          createdBy: actor.id,
        });
        await repo.insertVersion(tx, {
          skillId: id,
          version: 1,
          name: body.name,
          description: body.description ?? '',
          content: body.content ?? '',
          author: actorName(actor),
          reason: body.reason ?? (fork ? `forked from skill ${fork.from} v${fork.version}` : 'created'),
        });
        await index(tx, ownerProject, id);
        return (await repo.byId(id, tx))!;
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new Conflict('skill_exists', `A skill named '${body.name}' already exists here.`, { name: body.name });
      throw err;
    }
    const [created] = await named([stored]);
    await syncFile(created, null);
    return out(created);
  }

  /**
   * Apply a change as a new version. For a global skill, every fork is offered the new version.
   * @throws Conflict `skill_exists` when renamed onto a taken name.
   */
  async function updateSkill(
    actor: Actor,
    current: SkillRow,
    body: { name?: string; description?: string; content?: string; reason?: string },
  ): Promise<Skill> {
    let stored: StoredSkill;
    try {
      stored = await repo.transaction(async (tx) => {
        const cur = await repo.lockForUpdate(tx, current.id);
        if (!cur) throw notFound();
        const next = {
          name: body.name ?? cur.name,
          description: body.description ?? cur.description,
          content: body.content ?? cur.content,
        };
        if (cur.owner_project === null && body.content !== undefined)
          await checkPublish(tx, actor, next.content, false);
        const version = cur.version + 1;
        await repo.update(tx, cur.id, { ...next, version });
        await repo.insertVersion(tx, {
          skillId: cur.id,
          version,
          ...next,
          author: actorName(actor),
          reason: body.reason ?? 'updated',
        });
        if (cur.owner_project === null) await offerToForks(tx, cur.id, version);
        await index(tx, cur.owner_project, cur.id);
        return (await repo.byId(cur.id, tx))!;
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new Conflict('skill_exists', `A skill named '${body.name}' already exists here.`, { name: body.name });
      throw err;
    }
    const [updated] = await named([stored]);
    await syncFile(updated, current);
    return out(updated);
  }

  async function offerToForks(tx: Transaction<DB>, sourceId: number, version: number) {
    for (const f of await repo.forksOf(tx, sourceId)) {
      if (f.owner_project === null) continue;
      await repo.offer(tx, {
        projectId: f.owner_project,
        forkId: f.id,
        sourceId,
        fromVersion: f.forked_version ?? 1,
        toVersion: version,
      });
    }
  }

  async function deleteSkill(current: SkillRow): Promise<{ ok: true; id: number }> {
    await repo.transaction(async (tx) => {
      await repo.remove(tx, current.id);
      await index(tx, current.owner_project, current.id);
    });
    await syncFile(null, current);
    return { ok: true, id: current.id };
  }

  /** A skill of this project (optionally: only a fork). @throws NotFound `skill_not_found` for any other skill. */
  async function ownSkill(project: ProjectRef, id: number, forkOnly = false): Promise<SkillRow> {
    const r = await row(id);
    if (!r || r.owner_project !== project.id || (forkOnly && r.forked_from === null && !(await repo.wasFork(id))))
      throw notFound();
    return r;
  }

  /**
   * A skill `actor` may read: global, or of a project they own (admins: any). @throws NotFound, Forbidden `forbidden`.
   */
  async function readable(actor: Actor, id: number): Promise<SkillRow> {
    const r = await row(id);
    if (!r) throw notFound();
    if (r.owner_project !== null && !actor.isAdmin)
      requireOwnerOrAdmin(actor, await ownerOf(r.owner_project), 'You do not have access to this skill.', 'forbidden');
    return r;
  }
  /**
   * As `readable`, and a global skill is changed only by the user who published it or an admin.
   * @throws Forbidden `forbidden` for anyone else.
   */
  async function writable(actor: Actor, id: number): Promise<SkillRow> {
    const r = await readable(actor, id);
    if (r.owner_project === null)
      requireOwnerOrAdmin(
        actor,
        r.created_by,
        'Only the user who published this global skill or an administrator may change it; fork it into your project instead.',
        'forbidden',
      );
    return r;
  }

  type UpdateRow = NonNullable<Awaited<ReturnType<SkillsRepo['updateById']>>>;
  /** Offered updates as the API shows them (skills.schemas.ts `SkillUpdate`), with their project's name. */
  async function publicUpdates(rows: UpdateRow[]): Promise<Array<Static<typeof S.SkillUpdate>>> {
    const projects = await deps.projects.namesAndOwners([...new Set(rows.map((u) => u.project_id))]);
    return rows.map(({ project_id, ...u }) => ({
      ...u,
      project: projects.get(project_id)?.name ?? '',
      description: u.description ?? '',
      content: u.content ?? '',
    }));
  }

  async function decide(actor: Actor, id: number, approve: boolean) {
    const u = await repo.updateById(id);
    if (!u) throw new NotFound('Skill update not found.', 'skill_update_not_found');
    requireOwnerOrAdmin(actor, await ownerOf(u.project_id), 'You do not have access to this project.', 'forbidden');
    if (u.status !== 'pending')
      throw new Conflict('skill_update_decided', `This update was already ${u.status}.`, { status: u.status });
    const before = (await row(u.fork_id))!;
    const result = await repo.transaction(async (tx) => {
      if (!(await repo.decide(tx, id, approve ? 'approved' : 'rejected', actorName(actor))))
        throw new Conflict('skill_update_decided', 'This update was already decided.');
      if (!approve) return null;
      const fork = await repo.lockForUpdate(tx, u.fork_id);
      if (!fork) throw notFound();
      const next = fork.version + 1;
      const description = u.description ?? before.description;
      const content = u.content ?? before.content;
      await repo.update(tx, u.fork_id, { description, content, version: next, forkedVersion: u.to_version });
      await repo.insertVersion(tx, {
        skillId: u.fork_id,
        version: next,
        name: before.name,
        description,
        content,
        author: actorName(actor),
        reason: `merged global skill '${u.source_name}' v${u.to_version}`,
      });
      await index(tx, u.project_id, u.fork_id);
      return (await repo.byId(u.fork_id, tx))!;
    });
    const merged = result ? (await named([result]))[0] : null;
    if (merged) await syncFile(merged, before);
    const [update] = await publicUpdates([(await repo.updateById(id))!]);
    return { ok: true, update, skill: merged ? out(merged) : null };
  }

  return {
    /** Global skills, by name. */
    async listGlobal(): Promise<{ skills: Skill[] }> {
      return { skills: (await named(await repo.globals())).map(out) };
    },
    /**
     * Publish a global skill (any user); it records the caller as its publisher (`created_by`).
     * @throws Conflict `skill_exists` when a global skill has this name.
     */
    createGlobal: (actor: Actor, body: { name: string; description?: string; content?: string; reason?: string }) =>
      insertSkill(actor, null, body),
    /** Read any skill the caller may see. @throws NotFound, Forbidden (another user's project skill). */
    async get(actor: Actor, id: number): Promise<Skill> {
      return out(await readable(actor, id));
    },
    /**
     * Update by id: a global skill by its publisher or an admin; a project skill by the project's owner or an admin.
     */
    async update(
      actor: Actor,
      id: number,
      body: { name?: string; description?: string; content?: string; reason?: string },
    ): Promise<Skill> {
      return updateSkill(actor, await writable(actor, id), body);
    },
    /** Delete by id (same rule as update); forks of a deleted global skill keep their content. */
    async remove(actor: Actor, id: number) {
      return deleteSkill(await writable(actor, id));
    },
    /** Every version of a skill, newest first, with author and reason. */
    async evolution(actor: Actor, id: number) {
      await readable(actor, id);
      return { skill_id: id, versions: await repo.versions(id) };
    },

    /** The skills a project sees: the global ones plus its own (never another project's), by name. */
    async listForProject(actor: Actor, name: string): Promise<{ skills: Skill[] }> {
      const project = await deps.access.project(actor, name);
      return { skills: (await named(await repo.visible(project.id))).map(out) };
    },
    /**
     * The project's own skills (its forks and installed skills included), never a global one: what its workers'
     * prompts may hold (skills.port.ts). @throws as `access.project`.
     */
    async listOwn(actor: Actor, name: string): Promise<{ skills: Skill[] }> {
      const project = await deps.access.project(actor, name);
      return { skills: (await named(await repo.own(project.id))).map(out) };
    },
    /**
     * The own skills of project `projectId` (as `listOwn`), for work done inside that project on its owner's behalf
     * (skills.port.ts: a run's or a CLI session's project, resolved and checked by its caller); no actor check here.
     */
    async ownOfProject(projectId: number): Promise<{ skills: Skill[] }> {
      return { skills: (await named(await repo.own(projectId))).map(out) };
    },
    /** Create a skill owned by the project. @throws Conflict `skill_exists`. */
    async createForProject(
      actor: Actor,
      name: string,
      body: { name: string; description?: string; content?: string; reason?: string },
    ): Promise<Skill> {
      const project = await deps.access.project(actor, name);
      return insertSkill(actor, project.id, body);
    },
    /** Update one of the project's own skills. @throws NotFound for a global or another project's skill. */
    async updateForProject(
      actor: Actor,
      name: string,
      id: number,
      body: { name?: string; description?: string; content?: string; reason?: string },
      forkOnly = false,
    ): Promise<Skill> {
      const project = await deps.access.project(actor, name);
      return updateSkill(actor, await ownSkill(project, id, forkOnly), body);
    },
    /** Delete one of the project's own skills. */
    async removeForProject(actor: Actor, name: string, id: number, forkOnly = false) {
      const project = await deps.access.project(actor, name);
      return deleteSkill(await ownSkill(project, id, forkOnly));
    },

    /** The project's forks of global skills. */
    async listForks(actor: Actor, name: string): Promise<{ skills: Skill[] }> {
      const project = await deps.access.project(actor, name);
      return { skills: (await named(await repo.forks(project.id))).map(out) };
    },
    /**
     * Fork a global skill into the project. The global skill is named by `skill_id`, or else by `name` (the body
     * `{name, description, content}`); with `skill_id`, `name` is the fork's name. Name, description and content
     * default to the source's.
     * @throws BadRequest 400 `invalid_request` when neither names it; NotFound when no global skill has that id or
     *   name; Conflict `skill_exists`.
     */
    async fork(
      actor: Actor,
      name: string,
      body: { skill_id?: number; name?: string; description?: string; content?: string },
    ): Promise<Skill> {
      const project = await deps.access.project(actor, name);
      if (body.skill_id === undefined && body.name === undefined)
        throw new BadRequest('invalid_request', 'Name the global skill to fork with name or skill_id.', {
          details: [{ path: 'body/name', message: 'name or skill_id is required' }],
        });
      const src = body.skill_id !== undefined ? await repo.byId(body.skill_id) : await repo.globalByName(body.name!);
      if (!src || src.owner_project !== null)
        throw new NotFound(
          'Only a global skill can be forked; no global skill has this id or name.',
          'skill_not_found',
        );
      return insertSkill(
        actor,
        project.id,
        {
          name: body.name ?? src.name,
          description: body.description ?? src.description,
          content: body.content ?? src.content,
        },
        { from: src.id, version: src.version },
      );
    },

    /** Skill updates offered to the caller's projects (admins: every project), `status` pending by default. */
    async listUpdates(actor: Actor, q: { project?: string; status?: UpdateStatus }) {
      let projectIds: number[] | undefined;
      if (q.project) projectIds = [(await deps.access.project(actor, q.project)).id];
      else if (!actor.isAdmin) projectIds = await deps.projects.ownerProjectIds(actor.id);
      return { updates: await publicUpdates(await repo.listUpdates(q.status ?? 'pending', projectIds)) };
    },
    /** Approve: the fork takes the offered description and content as a new version. @throws Conflict when decided. */
    approve: (actor: Actor, id: number) => decide(actor, id, true),
    /** Reject: dismiss the offer; the fork is unchanged. */
    reject: (actor: Actor, id: number) => decide(actor, id, false),

    /** Document loader of the semantic index (`doc_type` skill, `doc_id` the skill id). */
    async loadDocument(_projectId: number | null, docId: string): Promise<LoadedDocument | null> {
      if (!/^\d+$/.test(docId)) return null;
      const r = await repo.byId(Number(docId));
      if (!r) return null;
      return {
        title: r.name,
        text: `# ${r.name}\n\n${r.description}\n\n${r.content}`,
        scope: r.owner_project === null ? 'global' : 'project',
      };
    },
  };
}

export type SkillsService = ReturnType<typeof createSkillsService>;

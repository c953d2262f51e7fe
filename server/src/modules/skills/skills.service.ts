/**
 * Skills (specification, Skills; CONTRACT.md §6).
 *
 * - A skill is global (`owner_project` null) or belongs to one project; a project sees the global skills
 *   plus its own, never another project's.
 * - Who writes what: any user reads global skills; only admins publish, edit or delete them. A project's
 *   skills (and forks) are written by whoever may act on the project (owner or admin).
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
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import type { Access, ProjectRef } from '../../access/access.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { LoadedDocument } from '../../lib/doc-sources.ts';
import { Conflict, Forbidden, NotFound } from '../../http/errors.ts';
import { atomicWrite } from '../../lib/atomic-write.ts';

export interface SkillsDeps {
  db: Kysely<DB>;
  access: Access;
  jobs: JobQueue;
  dataDir: string;
  log: { warn: (o: object, m: string) => void };
}

export interface Skill {
  id: number;
  owner_project: string | null;
  name: string;
  description: string;
  content: string;
  version: number;
  forked_from: number | null;
  forked_version: number | null;
  created_at: Date;
  updated_at: Date;
}
interface SkillRow extends Omit<Skill, 'owner_project'> {
  owner_project: number | null;
  project_name: string | null;
}

const actorName = (actor: Actor) => actor.name || actor.email || `user ${actor.id}`;
const notFound = () => new NotFound('Skill not found.', 'skill_not_found');

/** The SKILL.md text: YAML front matter (name, description as a JSON string, valid YAML) then the content. */
export function skillFile(s: { name: string; description: string; content: string }): string {
  return `---\nname: ${s.name}\ndescription: ${JSON.stringify(s.description)}\n---\n\n${s.content}${s.content.endsWith('\n') ? '' : '\n'}`;
}

export function createSkillsService(deps: SkillsDeps) {
  const { db } = deps;
  const globalDir = path.join(deps.dataDir, 'skills');

  const select = (ex: Kysely<DB> | Transaction<DB>) =>
    ex
      .selectFrom('skills as s')
      .leftJoin('projects as p', 'p.id', 's.owner_project')
      .select([
        's.id',
        's.owner_project',
        'p.name as project_name',
        's.name',
        's.description',
        's.content',
        's.version',
        's.forked_from',
        's.forked_version',
        's.created_at',
        's.updated_at',
      ]);
  const out = (r: SkillRow): Skill => ({ ...r, owner_project: r.project_name });

  async function row(ex: Kysely<DB> | Transaction<DB>, id: number): Promise<SkillRow | undefined> {
    return select(ex).where('s.id', '=', id).executeTakeFirst();
  }

  /** Folder of a skill's files: the project's `.skills/` or the global one. */
  const dirOf = (ownerProject: number | null, name: string) =>
    path.join(ownerProject === null ? globalDir : path.join(deps.access.projectDir(ownerProject), '.skills'), name);

  async function syncFile(after: SkillRow | null, before: { owner_project: number | null; name: string } | null) {
    try {
      if (before && (!after || after.name !== before.name))
        await fs.rm(dirOf(before.owner_project, before.name), { recursive: true, force: true });
      if (after) await atomicWrite(path.join(dirOf(after.owner_project, after.name), 'SKILL.md'), skillFile(after));
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'skill file not synced');
    }
  }

  const index = (tx: Transaction<DB>, ownerProject: number | null, id: number) =>
    deps.jobs.send('knowledge.index', { project_id: ownerProject, doc_type: 'skill', doc_id: String(id) }, { tx });

  const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

  async function insertSkill(
    actor: Actor,
    ownerProject: number | null,
    body: { name: string; description?: string; content?: string; reason?: string },
    fork?: { from: number; version: number },
  ): Promise<Skill> {
    let created: SkillRow;
    try {
      created = await db.transaction().execute(async (tx) => {
        const { id } = await tx
          .insertInto('skills')
          .values({
            owner_project: ownerProject,
            name: body.name,
            description: body.description ?? '',
            content: body.content ?? '',
            forked_from: fork?.from ?? null,
            forked_version: fork?.version ?? null,
            created_by: actor.id,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await tx
          .insertInto('skill_versions')
          .values({
            skill_id: id,
            version: 1,
            name: body.name,
            description: body.description ?? '',
            content: body.content ?? '',
            author: actorName(actor),
            reason: body.reason ?? (fork ? `forked from skill ${fork.from} v${fork.version}` : 'created'),
          })
          .execute();
        await index(tx, ownerProject, id);
        return (await row(tx, id))!;
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new Conflict('skill_exists', `A skill named '${body.name}' already exists here.`, { name: body.name });
      throw err;
    }
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
    let updated: SkillRow;
    try {
      updated = await db.transaction().execute(async (tx) => {
        const cur = await tx
          .selectFrom('skills')
          .selectAll()
          .where('id', '=', current.id)
          .forUpdate()
          .executeTakeFirst();
        if (!cur) throw notFound();
        const next = {
          name: body.name ?? cur.name,
          description: body.description ?? cur.description,
          content: body.content ?? cur.content,
        };
        const version = cur.version + 1;
        await tx
          .updateTable('skills')
          .set({ ...next, version, updated_at: new Date() })
          .where('id', '=', cur.id)
          .execute();
        await tx
          .insertInto('skill_versions')
          .values({ skill_id: cur.id, version, ...next, author: actorName(actor), reason: body.reason ?? 'updated' })
          .execute();
        if (cur.owner_project === null) await offerToForks(tx, cur.id, version);
        await index(tx, cur.owner_project, cur.id);
        return (await row(tx, cur.id))!;
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new Conflict('skill_exists', `A skill named '${body.name}' already exists here.`, { name: body.name });
      throw err;
    }
    await syncFile(updated, current);
    return out(updated);
  }

  async function offerToForks(tx: Transaction<DB>, sourceId: number, version: number) {
    const forks = await tx
      .selectFrom('skills')
      .select(['id', 'owner_project', 'forked_version'])
      .where('forked_from', '=', sourceId)
      .execute();
    for (const f of forks) {
      if (f.owner_project === null) continue;
      const pending = await tx
        .selectFrom('skill_updates')
        .select('id')
        .where('fork_id', '=', f.id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (pending)
        await tx
          .updateTable('skill_updates')
          .set({ to_version: version, created_at: new Date() })
          .where('id', '=', pending.id)
          .execute();
      else
        await tx
          .insertInto('skill_updates')
          .values({
            project_id: f.owner_project,
            fork_id: f.id,
            source_id: sourceId,
            from_version: f.forked_version ?? 1,
            to_version: version,
          })
          .execute();
    }
  }

  async function deleteSkill(current: SkillRow): Promise<{ ok: true; id: number }> {
    await db.transaction().execute(async (tx) => {
      await tx.deleteFrom('skills').where('id', '=', current.id).execute();
      await index(tx, current.owner_project, current.id);
    });
    await syncFile(null, current);
    return { ok: true, id: current.id };
  }

  /** A skill of this project (optionally: only a fork). @throws NotFound `skill_not_found` for any other skill. */
  async function ownSkill(project: ProjectRef, id: number, forkOnly = false): Promise<SkillRow> {
    const r = await row(db, id);
    if (!r || r.owner_project !== project.id || (forkOnly && r.forked_from === null && !(await wasFork(id))))
      throw notFound();
    return r;
  }
  /** A fork whose source was deleted keeps `forked_version`. */
  const wasFork = async (id: number) =>
    !!(await db
      .selectFrom('skills')
      .select('id')
      .where('id', '=', id)
      .where('forked_version', 'is not', null)
      .executeTakeFirst());

  /** A skill `actor` may read: global, or of a project they may act on. */
  async function readable(actor: Actor, id: number): Promise<SkillRow> {
    const r = await row(db, id);
    if (!r) throw notFound();
    if (r.owner_project !== null && !actor.isAdmin) {
      const p = await db.selectFrom('projects').select('owner_id').where('id', '=', r.owner_project).executeTakeFirst();
      if (p?.owner_id !== actor.id) throw new Forbidden('You do not have access to this skill.', 'forbidden');
    }
    return r;
  }
  /** As `readable`, and a global skill needs an admin to change. */
  async function writable(actor: Actor, id: number): Promise<SkillRow> {
    const r = await readable(actor, id);
    if (r.owner_project === null && !actor.isAdmin)
      throw new Forbidden(
        'Only administrators change global skills; fork it into your project instead.',
        'admin_required',
      );
    return r;
  }

  async function updateRow(id: number) {
    return db
      .selectFrom('skill_updates as u')
      .innerJoin('projects as p', 'p.id', 'u.project_id')
      .innerJoin('skills as f', 'f.id', 'u.fork_id')
      .innerJoin('skills as g', 'g.id', 'u.source_id')
      .leftJoin('skill_versions as v', (j) =>
        j.onRef('v.skill_id', '=', 'u.source_id').onRef('v.version', '=', 'u.to_version'),
      )
      .select([
        'u.id',
        'p.name as project',
        'p.owner_id',
        'u.project_id',
        'u.fork_id',
        'f.name as fork_name',
        'u.source_id',
        'g.name as source_name',
        'u.from_version',
        'u.to_version',
        'u.status',
        'v.description',
        'v.content',
        'u.created_at',
      ])
      .where('u.id', '=', id)
      .executeTakeFirst();
  }
  const publicUpdate = ({
    owner_id: _o,
    project_id: _p,
    ...u
  }: NonNullable<Awaited<ReturnType<typeof updateRow>>>) => ({
    ...u,
    description: u.description ?? '',
    content: u.content ?? '',
  });

  async function decide(actor: Actor, id: number, approve: boolean) {
    const u = await updateRow(id);
    if (!u) throw new NotFound('Skill update not found.', 'skill_update_not_found');
    if (!actor.isAdmin && u.owner_id !== actor.id)
      throw new Forbidden('You do not have access to this project.', 'forbidden');
    if (u.status !== 'pending')
      throw new Conflict('skill_update_decided', `This update was already ${u.status}.`, { status: u.status });
    const before = (await row(db, u.fork_id))!;
    const result = await db.transaction().execute(async (tx) => {
      const claimed = await tx
        .updateTable('skill_updates')
        .set({ status: approve ? 'approved' : 'rejected', decided_by: actorName(actor), decided_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .returning('id')
        .executeTakeFirst();
      if (!claimed) throw new Conflict('skill_update_decided', 'This update was already decided.');
      if (!approve) return null;
      const version = await tx
        .selectFrom('skills')
        .select('version')
        .where('id', '=', u.fork_id)
        .forUpdate()
        .executeTakeFirstOrThrow();
      const next = version.version + 1;
      const description = u.description ?? before.description;
      const content = u.content ?? before.content;
      await tx
        .updateTable('skills')
        .set({ description, content, version: next, forked_version: u.to_version, updated_at: new Date() })
        .where('id', '=', u.fork_id)
        .execute();
      await tx
        .insertInto('skill_versions')
        .values({
          skill_id: u.fork_id,
          version: next,
          name: before.name,
          description,
          content,
          author: actorName(actor),
          reason: `merged global skill '${u.source_name}' v${u.to_version}`,
        })
        .execute();
      await index(tx, u.project_id, u.fork_id);
      return (await row(tx, u.fork_id))!;
    });
    if (result) await syncFile(result, before);
    return { ok: true, update: publicUpdate((await updateRow(id))!), skill: result ? out(result) : null };
  }

  return {
    /** Global skills, by name. */
    async listGlobal(): Promise<{ skills: Skill[] }> {
      return { skills: (await select(db).where('s.owner_project', 'is', null).orderBy('s.name').execute()).map(out) };
    },
    /** Publish a global skill (admins; the route requires the role). @throws Conflict `skill_exists`. */
    createGlobal: (actor: Actor, body: { name: string; description?: string; content?: string; reason?: string }) =>
      insertSkill(actor, null, body),
    /** Read any skill the caller may see. @throws NotFound, Forbidden (another user's project skill). */
    async get(actor: Actor, id: number): Promise<Skill> {
      return out(await readable(actor, id));
    },
    /** Update by id: global skills need an admin; project skills the project's owner or an admin. */
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
      const versions = await db
        .selectFrom('skill_versions')
        .select(['version', 'name', 'description', 'content', 'author', 'reason', 'created_at'])
        .where('skill_id', '=', id)
        .orderBy('version', 'desc')
        .execute();
      return { skill_id: id, versions };
    },

    /** The skills a project sees: the global ones plus its own (never another project's), by name. */
    async listForProject(actor: Actor, name: string): Promise<{ skills: Skill[] }> {
      const project = await deps.access.project(actor, name);
      const rows = await select(db)
        .where((eb) => eb.or([eb('s.owner_project', 'is', null), eb('s.owner_project', '=', project.id)]))
        .orderBy('s.name')
        .orderBy('s.owner_project')
        .execute();
      return { skills: rows.map(out) };
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
      const rows = await select(db)
        .where('s.owner_project', '=', project.id)
        .where('s.forked_version', 'is not', null)
        .orderBy('s.name')
        .execute();
      return { skills: rows.map(out) };
    },
    /**
     * Fork a global skill into the project (name, description, content default to the source's).
     * @throws NotFound when `skill_id` is not a global skill; Conflict `skill_exists`.
     */
    async fork(
      actor: Actor,
      name: string,
      body: { skill_id: number; name?: string; description?: string; content?: string },
    ): Promise<Skill> {
      const project = await deps.access.project(actor, name);
      const src = await row(db, body.skill_id);
      if (!src || src.owner_project !== null)
        throw new NotFound('Only a global skill can be forked; no global skill has this id.', 'skill_not_found');
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
    async listUpdates(actor: Actor, q: { project?: string; status?: 'pending' | 'approved' | 'rejected' }) {
      let projectId: number | undefined;
      if (q.project) projectId = (await deps.access.project(actor, q.project)).id;
      let qb = db
        .selectFrom('skill_updates as u')
        .innerJoin('projects as p', 'p.id', 'u.project_id')
        .select('u.id')
        .where('u.status', '=', q.status ?? 'pending');
      if (projectId !== undefined) qb = qb.where('u.project_id', '=', projectId);
      else if (!actor.isAdmin) qb = qb.where('p.owner_id', '=', actor.id);
      const ids = await qb.orderBy('u.id', 'desc').limit(500).execute();
      const updates = [];
      for (const { id } of ids) updates.push(publicUpdate((await updateRow(id))!));
      return { updates };
    },
    /** Approve: the fork takes the offered description and content as a new version. @throws Conflict when decided. */
    approve: (actor: Actor, id: number) => decide(actor, id, true),
    /** Reject: dismiss the offer; the fork is unchanged. */
    reject: (actor: Actor, id: number) => decide(actor, id, false),

    /** Document loader of the semantic index (`doc_type` skill, `doc_id` the skill id). */
    async loadDocument(_projectId: number | null, docId: string): Promise<LoadedDocument | null> {
      if (!/^\d+$/.test(docId)) return null;
      const r = await row(db, Number(docId));
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

/**
 * Pinned notes, learnings and the knowledge graph of a project (specification: "Chat, messages, pins",
 * "Memory and knowledge"; CONTRACT.md §6 for pins).
 *
 * - Pin: `{id, text, issue_id, path, position, created_by, created_at}`; `issue_id` must name an issue of
 *   the project, `path` a path inside the project directory (403 `path_outside_project` otherwise); new pins
 *   go last unless `position` is given; listed by position.
 * - Learning: a short lesson `{id, text, source, tags, author, created_at}`; listed newest first.
 * - Knowledge graph: nodes `{id: '<type>:<key>', type, label}` for issues (the newest 2000), skills the
 *   project sees, wiki pages, notes (when a `notes` table exists) and workers; edges `{source, target, type}`:
 *   `assignment` (worker → issue it is assigned), `uses` (worker → skill in its context_assets),
 *   `fork` (fork → global skill), `link` (note → issue, when the notes area's `note_issue_links` table exists)
 *   and `reference` for `#12` and `[[Page]]` (page title or path) found in issue, wiki and skill text.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import type { Access } from '../../access/access.ts';
import { NotFound } from '../../http/errors.ts';
import { projectPathRefusal, resolveInside } from '../../lib/paths.ts';

export interface GraphNode {
  id: string;
  type: 'issue' | 'skill' | 'wiki' | 'note' | 'worker';
  label: string;
}
export interface GraphEdge {
  source: string;
  target: string;
  type: 'assignment' | 'uses' | 'fork' | 'link' | 'reference';
}

const actorName = (actor: Actor) => actor.name || actor.email || `user ${actor.id}`;
export const GRAPH_ISSUE_CAP = 2000;

export function createPinsService(deps: { db: Kysely<DB>; access: Access }) {
  const { db } = deps;
  const pinCols = ['id', 'text', 'issue_id', 'path', 'position', 'created_by', 'created_at'] as const;

  async function tableExists(name: string): Promise<boolean> {
    const r = await sql<{ t: string | null }>`select to_regclass(${name})::text as t`.execute(db);
    return !!r.rows[0]?.t;
  }

  return {
    /** Pins by position. */
    async listPins(actor: Actor, name: string) {
      const project = await deps.access.project(actor, name);
      return {
        pins: await db
          .selectFrom('pins')
          .select(pinCols)
          .where('project_id', '=', project.id)
          .orderBy('position')
          .orderBy('id')
          .execute(),
      };
    },
    /** Pin a note. @throws NotFound `issue_not_found`; Forbidden `path_outside_project`. */
    async addPin(
      actor: Actor,
      name: string,
      body: { text: string; issue_id?: number; path?: string; position?: number },
    ) {
      const project = await deps.access.project(actor, name);
      const rel =
        body.path !== undefined
          ? (await resolveInside(project.dir, body.path, { create: true, refuse: projectPathRefusal })).rel
          : null;
      if (body.issue_id !== undefined) {
        const i = await db
          .selectFrom('issues')
          .select('number')
          .where('project_id', '=', project.id)
          .where('number', '=', body.issue_id)
          .executeTakeFirst();
        if (!i) throw new NotFound(`Issue #${body.issue_id} was not found in this project.`, 'issue_not_found');
      }
      return db.transaction().execute(async (tx) => {
        let position = body.position;
        if (position === undefined) {
          const m = await tx
            .selectFrom('pins')
            .select((eb) => eb.fn.max('position').as('m'))
            .where('project_id', '=', project.id)
            .executeTakeFirst();
          position = (m?.m ?? -1) + 1;
        }
        return tx
          .insertInto('pins')
          .values({
            project_id: project.id,
            text: body.text,
            issue_id: body.issue_id ?? null,
            path: rel,
            position,
            created_by: actorName(actor),
          })
          .returning(pinCols)
          .executeTakeFirstOrThrow();
      });
    },
    /** Unpin. @throws NotFound `pin_not_found`. */
    async removePin(actor: Actor, name: string, id: number) {
      const project = await deps.access.project(actor, name);
      const r = await db
        .deleteFrom('pins')
        .where('project_id', '=', project.id)
        .where('id', '=', id)
        .executeTakeFirst();
      if (!r.numDeletedRows) throw new NotFound('Pin not found.', 'pin_not_found');
      return { ok: true, id };
    },

    /** Learnings, newest first; `tag` filters, `limit` 1–500 (default 100). */
    async listLearnings(actor: Actor, name: string, q: { tag?: string; limit?: number }) {
      const project = await deps.access.project(actor, name);
      let qb = db
        .selectFrom('learnings')
        .select(['id', 'text', 'source', 'tags', 'author', 'created_at'])
        .where('project_id', '=', project.id);
      if (q.tag) qb = qb.where(sql<boolean>`tags @> ${JSON.stringify([q.tag])}::jsonb`);
      return {
        learnings: await qb
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(q.limit ?? 100)
          .execute(),
      };
    },
    /** Record a learning; the author is the caller. */
    async addLearning(actor: Actor, name: string, body: { text: string; source?: string; tags?: string[] }) {
      const project = await deps.access.project(actor, name);
      return db
        .insertInto('learnings')
        .values({
          project_id: project.id,
          text: body.text,
          source: body.source ?? null,
          tags: JSON.stringify([...new Set(body.tags ?? [])]),
          author: actorName(actor),
        })
        .returning(['id', 'text', 'source', 'tags', 'author', 'created_at'])
        .executeTakeFirstOrThrow();
    },

    /** The project's knowledge graph `{nodes, edges}` (see the module comment). */
    async graph(actor: Actor, name: string): Promise<{ nodes: GraphNode[]; edges: GraphEdge[] }> {
      const project = await deps.access.project(actor, name);
      const [issues, skills, pages, workers] = await Promise.all([
        db
          .selectFrom('issues')
          .select(['number', 'title', 'description', 'assignee'])
          .where('project_id', '=', project.id)
          .orderBy('number', 'desc')
          .limit(GRAPH_ISSUE_CAP)
          .execute(),
        db
          .selectFrom('skills')
          .select(['id', 'name', 'content', 'description', 'forked_from', 'owner_project'])
          .where((eb) => eb.or([eb('owner_project', 'is', null), eb('owner_project', '=', project.id)]))
          .execute(),
        db.selectFrom('wiki_pages').select(['path', 'title', 'content']).where('project_id', '=', project.id).execute(),
        db
          .selectFrom('workers')
          .select(['id', 'label', 'context_assets'])
          .where('project_id', '=', project.id)
          .execute(),
      ]);
      const nodes: GraphNode[] = [];
      const edges: GraphEdge[] = [];
      const seen = new Set<string>();
      const edge = (source: string, target: string, type: GraphEdge['type']) => {
        const k = `${source}|${target}|${type}`;
        if (source !== target && !seen.has(k)) {
          seen.add(k);
          edges.push({ source, target, type });
        }
      };
      for (const i of issues) nodes.push({ id: `issue:${i.number}`, type: 'issue', label: `#${i.number} ${i.title}` });
      for (const s of skills) nodes.push({ id: `skill:${s.id}`, type: 'skill', label: s.name });
      for (const p of pages) nodes.push({ id: `wiki:${p.path}`, type: 'wiki', label: p.title });
      for (const w of workers) nodes.push({ id: `worker:${w.id}`, type: 'worker', label: w.label });
      if (await tableExists('notes')) {
        const notes = await sql<{
          id: number;
          title: string;
        }>`select id, title from notes where project_id = ${project.id}`.execute(db);
        for (const n of notes.rows) nodes.push({ id: `note:${n.id}`, type: 'note', label: n.title });
        if (await tableExists('note_issue_links')) {
          const links = await sql<{
            note_id: number;
            issue_id: number;
          }>`select l.note_id, l.issue_id from note_issue_links l join notes n on n.id = l.note_id where n.project_id = ${project.id}`.execute(
            db,
          );
          for (const l of links.rows) edge(`note:${l.note_id}`, `issue:${l.issue_id}`, 'link');
        }
      }
      const issueIds = new Set(issues.map((i) => i.number));
      const pageKey = new Map<string, string>();
      for (const p of pages) {
        pageKey.set(p.title.toLowerCase(), p.path);
        pageKey.set(p.path.toLowerCase(), p.path);
        pageKey.set(p.path.replace(/\.md$/i, '').toLowerCase(), p.path);
      }
      const skillByName = new Map(skills.filter((s) => s.owner_project !== null).map((s) => [s.name, s.id]));
      for (const s of skills) if (!skillByName.has(s.name)) skillByName.set(s.name, s.id);
      const references = (from: string, text: string) => {
        for (const m of text.matchAll(/(?:^|[^\w&])#(\d{1,9})\b/g))
          if (issueIds.has(Number(m[1]))) edge(from, `issue:${Number(m[1])}`, 'reference');
        for (const m of text.matchAll(/\[\[([^\]|#]{1,300})(?:[|#][^\]]*)?\]\]/g)) {
          const target = pageKey.get(m[1].trim().toLowerCase());
          if (target) edge(from, `wiki:${target}`, 'reference');
        }
      };
      for (const w of workers) {
        for (const i of issues)
          if (
            i.assignee &&
            (i.assignee === String(w.id) || i.assignee.replace(/^@/, '').toLowerCase() === w.label.toLowerCase())
          )
            edge(`worker:${w.id}`, `issue:${i.number}`, 'assignment');
        for (const a of (w.context_assets as string[] | null) ?? []) {
          const sid = skillByName.get(a);
          if (sid !== undefined) edge(`worker:${w.id}`, `skill:${sid}`, 'uses');
        }
      }
      const skillIds = new Set(skills.map((s) => s.id));
      for (const s of skills) {
        if (s.forked_from !== null && skillIds.has(s.forked_from))
          edge(`skill:${s.id}`, `skill:${s.forked_from}`, 'fork');
        references(`skill:${s.id}`, `${s.description}\n${s.content}`);
      }
      for (const i of issues) references(`issue:${i.number}`, `${i.title}\n${i.description}`);
      for (const p of pages) references(`wiki:${p.path}`, p.content);
      return { nodes, edges };
    },
  };
}

export type PinsService = ReturnType<typeof createPinsService>;

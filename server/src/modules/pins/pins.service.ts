/**
 * Pinned notes, learnings and the knowledge graph of a project (docs/ARCHITECTURE.md, Issues, skills, wiki, files,
 * pins, learnings).
 *
 * - Pin: `{id, text, issue_id, path, position, created_by, created_at}`; `issue_id` must name an issue of
 *   the project, `path` a path inside the project directory (403 `path_outside_project` otherwise); new pins
 *   go last unless `position` is given; listed by position.
 * - Learning: a short lesson `{id, text, source, tags, author, created_at}`; listed newest first.
 * - Knowledge graph: nodes `{id: '<type>:<key>', type, label}` for issues (the newest 2000), skills the
 *   project sees, wiki pages, research notes (the notes area) and workers; edges `{source, target, type}`:
 *   `assignment` (worker → issue it is assigned), `uses` (worker → skill in its context_assets),
 *   `fork` (fork → global skill), `link` (note → issue, from the notes area)
 *   and `reference` for `#12` and `[[Page]]` (page title or path) found in issue, wiki and skill text.
 */
import type { Static } from 'typebox';
import type { Actor } from '../../http/auth.ts';
import type { Access } from '../../access/access.ts';
import { NotFound } from '../../http/errors.ts';
import { projectPathRefusal, resolveInside } from '../../lib/paths.ts';
import type { IssuesRepo } from '../issues/issues.repo.ts';
import type { NotesRepo } from '../notes/notes.repo.ts';
import type { SkillsRepo } from '../skills/skills.repo.ts';
import type { WikiRepo } from '../wiki/wiki.repo.ts';
import type { WorkersRepo } from '../workers/workers.repo.ts';
import type { PinsRepo } from './pins.repo.ts';
import type * as S from './pins.schemas.ts';

/** A node of the knowledge graph (pins.schemas.ts `GraphNode`). */
export type GraphNode = Static<typeof S.GraphNode>;
/** An edge of the knowledge graph (pins.schemas.ts `GraphEdge`). */
export type GraphEdge = Static<typeof S.GraphEdge>;

const actorName = (actor: Actor) => actor.name || actor.email || `user ${actor.id}`;
export const GRAPH_ISSUE_CAP = 2000;

export interface PinsDeps {
  repo: PinsRepo;
  /** The issues area: a pin's issue must exist; the graph's issues. */
  issues: Pick<IssuesRepo, 'exists' | 'forGraph'>;
  /** The skills area: the graph's skills. */
  skills: Pick<SkillsRepo, 'forGraph'>;
  /** The wiki area: the graph's pages. */
  wiki: Pick<WikiRepo, 'forGraph'>;
  /** The workers area: the graph's workers. */
  workers: Pick<WorkersRepo, 'refs'>;
  /** The notes area: the graph's notes and their note → issue links. */
  notes: Pick<NotesRepo, 'graph'>;
  access: Access;
}

/** Pins, learnings and the knowledge graph (see the module comment); built once by services.ts. */
export function createPinsService(deps: PinsDeps) {
  const { repo } = deps;

  return {
    /** Pins by position. */
    async listPins(actor: Actor, name: string) {
      const project = await deps.access.project(actor, name);
      return { pins: await repo.pins(project.id) };
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
      if (body.issue_id !== undefined && !(await deps.issues.exists(project.id, body.issue_id)))
        throw new NotFound(`Issue #${body.issue_id} was not found in this project.`, 'issue_not_found');
      return repo.transaction(async (tx) =>
        repo.insertPin(tx, {
          projectId: project.id,
          text: body.text,
          issueId: body.issue_id ?? null,
          path: rel,
          position: body.position ?? (await repo.lastPosition(tx, project.id)) + 1,
          createdBy: actorName(actor),
        }),
      );
    },
    /** Unpin. @throws NotFound `pin_not_found`. */
    async removePin(actor: Actor, name: string, id: number) {
      const project = await deps.access.project(actor, name);
      if (!(await repo.removePin(project.id, id))) throw new NotFound('Pin not found.', 'pin_not_found');
      return { ok: true, id };
    },

    /** Learnings, newest first; `tag` filters, `limit` 1–500 (default 100). */
    async listLearnings(actor: Actor, name: string, q: { tag?: string; limit?: number }) {
      const project = await deps.access.project(actor, name);
      return { learnings: await repo.learnings(project.id, { tag: q.tag, limit: q.limit ?? 100 }) };
    },
    /** Record a learning; the author is the caller. */
    async addLearning(actor: Actor, name: string, body: { text: string; source?: string; tags?: string[] }) {
      const project = await deps.access.project(actor, name);
      return repo.insertLearning({
        projectId: project.id,
        text: body.text,
        source: body.source ?? null,
        tags: [...new Set(body.tags ?? [])],
        author: actorName(actor),
      });
    },

    /** The project's knowledge graph `{nodes, edges}` (see the module comment). */
    async graph(actor: Actor, name: string): Promise<{ nodes: GraphNode[]; edges: GraphEdge[] }> {
      const project = await deps.access.project(actor, name);
      const [issues, skills, pages, workers] = await Promise.all([
        deps.issues.forGraph(project.id, GRAPH_ISSUE_CAP),
        deps.skills.forGraph(project.id),
        deps.wiki.forGraph(project.id),
        deps.workers.refs(project.id),
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
      const notes = await deps.notes.graph(project.id);
      for (const n of notes.notes) nodes.push({ id: `note:${n.id}`, type: 'note', label: n.title });
      for (const l of notes.links) edge(`note:${l.note_id}`, `issue:${l.issue_id}`, 'link');
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
        for (const a of w.context_assets ?? []) {
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

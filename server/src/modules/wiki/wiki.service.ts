/**
 * The project wiki (docs/ARCHITECTURE.md, Issues, skills, wiki, files, pins, learnings). Bodies: `PUT …/wiki/save`
 * `{path, content}`; answers: tree `{tree:[{path, title, children?}]}`, file `{path, content, updated_at}`.
 *
 * Storage: pages live in the database (`wiki_pages`, authoritative), keyed by a relative path such as
 * `guides/setup.md`; folders are implied by the paths. Paths are validated like file paths (no `..`, no
 * absolute paths: 403 `path_outside_project`; no control characters: 400 `invalid_path`).
 * A save sends a `knowledge.index` job in its transaction: the page is re-embedded in the background by the
 * indexer, whose failures are logged and retried by the queue and never fail the save.
 * The download is a ZIP streamed while pages are read in batches (keyset pagination), so the whole wiki is
 * never held in memory: the next batch is read only when the archive has reached the last page of the current one.
 */
import { Readable } from 'node:stream';
import path from 'node:path';
import type { Actor } from '../../http/auth.ts';
import type { Access } from '../../access/access.ts';
import type { StorageQuota } from '../usage/usage.storage.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { LoadedDocument } from '../../lib/doc-sources.ts';
import { BadRequest, NotFound } from '../../http/errors.ts';
import { normalizeRelative, projectPathRefusal } from '../../lib/paths.ts';
import type { WikiRepo } from './wiki.repo.ts';
import type { TreeNode } from './wiki.schemas.ts';

export interface WikiDeps {
  repo: WikiRepo;
  access: Access;
  jobs: JobQueue;
  /** The owner's storage quota and the disk floor, asked before a page is saved (usage.storage.ts). */
  quota: Pick<StorageQuota, 'reserve'>;
  log: { warn: (o: object, m: string) => void; error: (o: object, m: string) => void };
  /** Pages read per batch while streaming the ZIP (default 100). */
  zipBatch?: number;
}

/**
 * Validate and normalize a page path.
 * @throws Forbidden `path_outside_project` for traversal or absolute paths; BadRequest `invalid_path` otherwise.
 */
export function pagePath(p: string): string {
  const norm = normalizeRelative(p.trim(), projectPathRefusal);
  if (!norm) throw new BadRequest('invalid_path', 'A page path is required.');
  if (/[\x00-\x1f\x7f]/.test(norm)) throw new BadRequest('invalid_path', 'The page path contains control characters.');
  if (norm.split('/').some((s) => s === '.' || s.startsWith('.')))
    throw new BadRequest('invalid_path', 'Page path segments may not start with a dot.');
  return norm;
}

/** The page title: its first `# ` heading, else the file name without `.md`. */
export function pageTitle(p: string, content: string): string {
  const h = /^#\s+(.+?)\s*#*\s*$/m.exec(content);
  return (h?.[1] ?? path.posix.basename(p).replace(/\.md$/i, '')).slice(0, 300);
}

/** Build the folder tree from sorted page paths. */
export function buildTree(pages: { path: string; title: string }[]): TreeNode[] {
  const root: TreeNode[] = [];
  const folders = new Map<string, TreeNode>();
  const folder = (p: string): TreeNode[] => {
    if (!p) return root;
    let f = folders.get(p);
    if (!f) {
      f = { path: p, title: path.posix.basename(p), children: [] };
      folders.set(p, f);
      folder(path.posix.dirname(p) === '.' ? '' : path.posix.dirname(p)).push(f);
    }
    return f.children!;
  };
  for (const pg of pages) {
    const dir = path.posix.dirname(pg.path);
    folder(dir === '.' ? '' : dir).push({ path: pg.path, title: pg.title });
  }
  return root;
}

/** The wiki service (see the module comment); built once by services.ts. */
export function createWikiService(deps: WikiDeps) {
  const { repo } = deps;
  const batch = deps.zipBatch ?? 100;

  return {
    /** `{tree}`: folders (with children) and pages, by path. */
    async tree(actor: Actor, name: string): Promise<{ tree: TreeNode[] }> {
      const project = await deps.access.project(actor, name);
      return { tree: buildTree(await repo.titles(project.id)) };
    },

    /** One page. @throws NotFound `page_not_found`. */
    async read(actor: Actor, name: string, p: string) {
      const project = await deps.access.project(actor, name);
      const row = await repo.page(project.id, pagePath(p));
      if (!row) throw new NotFound('No wiki page has this path.', 'page_not_found');
      return row;
    },

    /**
     * Create or replace a page; queues its re-embedding in the same transaction.
     * @param author who is credited (`updated_by`): a worker's label when a worker saves through its tools;
     *   by default the caller's name or e-mail.
     * @returns the page.
     * @throws 413 `storage_quota_exceeded`, 507 `insufficient_storage` (the owner's storage quota, the disk floor).
     */
    async save(
      actor: Actor,
      name: string,
      body: { path: string; content: string },
      author: string = actor.name || actor.email,
    ) {
      const p = pagePath(body.path);
      const project = await deps.access.project(actor, name);
      const title = pageTitle(p, body.content);
      // A replaced page frees its old bytes: only the growth is charged.
      const before = await repo.page(project.id, p);
      const grows =
        Buffer.byteLength(body.content) - (before ? Buffer.byteLength(before.content) : -Buffer.byteLength(p));
      await deps.quota.reserve(project.owner_id, Math.max(0, grows));
      return repo.transaction(async (tx) => {
        const row = await repo.upsert(tx, {
          projectId: project.id,
          path: p,
          title,
          content: body.content,
          updatedBy: author,
        });
        await deps.jobs.send('knowledge.index', { project_id: project.id, doc_type: 'wiki', doc_id: p }, { tx });
        return row;
      });
    },

    /**
     * The wiki as a ZIP (pages at their paths), streamed. @returns the file name and a readable stream;
     * a failure after the first byte ends the stream with an error (the client sees a truncated download).
     */
    async download(actor: Actor, name: string): Promise<{ filename: string; stream: NodeJS.ReadableStream }> {
      const project = await deps.access.project(actor, name);
      // yazl at the first download, not at every start.
      const { ZipFile } = await import('yazl');
      const zip = new ZipFile();
      const out = zip.outputStream as Readable;
      let closed = false;
      const onClose = new Promise<void>((resolve) =>
        out.once('close', () => {
          closed = true;
          resolve();
        }),
      );
      const produce = async () => {
        let after: string | null = null;
        while (!closed) {
          const rows = await repo.pagesAfter(project.id, after, batch);
          if (!rows.length) break;
          let reachedLast!: () => void;
          const reached = new Promise<void>((r) => (reachedLast = r));
          rows.forEach((r, i) => {
            const data = Buffer.from(r.content, 'utf8');
            zip.addReadStreamLazy(r.path, { mtime: r.updated_at, size: data.length }, (cb) => {
              if (i === rows.length - 1) reachedLast();
              cb(null, Readable.from([data]));
            });
          });
          after = rows[rows.length - 1].path;
          await Promise.race([reached, onClose]);
        }
        if (!closed) zip.end();
      };
      produce().catch((err) => {
        deps.log.error({ err: (err as Error).message, project: project.id }, 'wiki download failed');
        out.destroy(err as Error);
      });
      return { filename: `${project.name}-wiki.zip`, stream: out };
    },

    /** Document loader of the semantic index (`doc_type` wiki, `doc_id` the page path). */
    async loadDocument(projectId: number | null, docId: string): Promise<LoadedDocument | null> {
      if (projectId === null) return null;
      const row = await repo.document(projectId, docId);
      return row ? { title: row.title, text: row.content, scope: 'project' } : null;
    },
  };
}

export type WikiService = ReturnType<typeof createWikiService>;

/**
 * Research notes (docs/ARCHITECTURE.md, Research notes): notes and
 * their sources. The area is split by concern: this service (notes, sources, the progress stream, the sweep),
 * notes.uploads.ts (sources that arrive as files, its methods part of this service), notes.processing.ts (the
 * `notes.process` job: extraction), notes.chat.ts (the grounded chat) and notes.privacy.ts (export and erasure).
 *
 * - A note collects sources. A source is a file (multipart, chunked upload, or a file of the project's working
 *   directory copied in), a web page or a YouTube video. Adding one stores the row `queued` and sends the
 *   `notes.process` job in the same transaction; the progress stream follows the row on any instance.
 * - Files live under `DATA_DIR/notes/<project id>/<note id>/` (notes.storage.ts).
 * - Idle chunked-upload sessions expire after 30 minutes with their bytes, and sources whose processing was
 *   interrupted are failed: the sweep, every minute, on any instance (each row is removed once).
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Static } from 'typebox';
import type { Access } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import { BadRequest, NotFound } from '../../http/errors.ts';
import type { SseEvent } from '../../http/sse.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Bus } from '../../lib/bus.ts';
import { follow } from '../../lib/follow.ts';
import type { LoadedDocument } from '../../lib/doc-sources.ts';
import type { KnowledgeIndex } from '../knowledge/knowledge.index.ts';
import { checkUrl, FetchRefused } from '../../lib/safe-fetch.ts';
import { cutText, defaultTitle, UPLOAD_IDLE_MS, youtubeId } from './notes.rules.ts';
import type { NotesRepo } from './notes.repo.ts';
import type * as S from './notes.schemas.ts';
import type { NoteStorage } from './notes.storage.ts';
import type { StorageQuota } from '../usage/usage.storage.ts';
import { createNoteUploads, type QueuedSource } from './notes.uploads.ts';

/**
 * Characters of a source's text that are embedded (the chat's text fallback reads the whole text); a longer source
 * is indexed in part and says so (`index_partial`, `indexed_chars`).
 */
export const INDEX_MAX_CHARS = 1_000_000;
/** A source still `processing` this long after it was claimed was interrupted (its process died). */
export const STUCK_MS = 30 * 60_000;
/** How often each instance sweeps expired upload sessions and interrupted sources (ms). */
export const SWEEP_MS = 60_000;

export type NoteSummary = Static<typeof S.Note>;
export type NoteDetail = Static<typeof S.NoteDetail>;
type UrlBody = Static<typeof S.UrlSourceBody>;

export interface NotesDeps {
  repo: NotesRepo;
  access: Access;
  jobs: JobQueue;
  bus: Bus;
  /** The area's folders (notes.storage.ts). */
  storage: NoteStorage;
  /** The owner's storage quota and the disk floor, asked before a source's file is kept (usage.storage.ts). */
  quota: Pick<StorageQuota, 'reserve' | 'changed'>;
  log: { warn(o: object, m: string): void; error(o: object, m: string): void };
  /**
   * How much of each source's text the semantic index covers (knowledge.index.ts `coverage`): a source indexed only
   * in part says so on its detail (`index_partial`, `indexed_chars`).
   */
  coverage?: KnowledgeIndex['coverage'];
}

/** Media types of the files a citation opens (PDF pages, recordings at a second), by extension. */
const VIEWABLE: Record<string, string> = {
  pdf: 'application/pdf',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
};

/** The media type a source's file is served as, or null when its kind is not opened in place. */
function viewableType(kind: string, fileName: string): string | null {
  const type = VIEWABLE[path.extname(fileName).slice(1).toLowerCase()];
  if (kind === 'pdf') return type === 'application/pdf' ? type : null;
  if (kind !== 'audio' && kind !== 'video') return null;
  return type && type !== 'application/pdf' ? type : 'application/octet-stream';
}

const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The notes service (see the module comment); built once by services.ts. */
export function createNotesService(deps: NotesDeps) {
  const { repo } = deps;
  const { noteDir, uploadFile } = deps.storage;
  let timer: NodeJS.Timeout | undefined;

  const publish = (id: number) => deps.bus.publish('notes.source', { id });

  async function noteOf(actor: Actor, name: string, id: number) {
    const project = await deps.access.project(actor, name);
    const note = await repo.find(project.id, id);
    if (!note) throw new NotFound(`Note ${id} was not found in this project.`, 'note_not_found');
    return { project, note };
  }

  type Coverage = Awaited<ReturnType<KnowledgeIndex['coverage']>>;
  const sourceView = (s: NonNullable<Awaited<ReturnType<NotesRepo['source']>>>, coverage?: Coverage) => ({
    id: s.id,
    source_type: s.source_type,
    title: s.title ?? s.default_title,
    url: s.url,
    status: s.status,
    duration_seconds: s.duration_seconds,
    error: s.error,
    content_text: s.content_text,
    size_bytes: s.size_bytes === null ? null : Number(s.size_bytes),
    created_at: s.created_at,
    ...indexState(s.id, coverage),
  });

  /** `index_partial` and `indexed_chars` of a source from the index's coverage (not indexed yet: false, null). */
  const indexState = (id: number, coverage?: Coverage) => {
    const c = coverage?.get(String(id));
    return { index_partial: c ? c.indexed_chars < c.total_chars : false, indexed_chars: c ? c.indexed_chars : null };
  };

  /** The index's coverage of a project's sources (empty when the index is not wired or cannot answer). */
  async function coverageOf(projectId: number, ids: number[]): Promise<Coverage> {
    if (!deps.coverage || !ids.length) return new Map();
    try {
      return await deps.coverage(projectId, 'note_source', ids.map(String));
    } catch (err) {
      deps.log.warn({ err: errMessage(err) }, 'notes: index coverage unavailable');
      return new Map();
    }
  }

  /** Store a source row and its processing job in one transaction. @returns the source id. */
  async function queueSource(
    v: QueuedSource & { url?: string | null },
  ): Promise<{ source_id: number; status: 'queued' }> {
    const title = v.title?.trim() ? v.title.trim().slice(0, 200) : null;
    const id = await repo.transaction(async (tx) => {
      // The note may have been deleted meanwhile: the foreign key refuses the row then.
      if (!(await repo.find(v.projectId, v.noteId, tx))) throw new NotFound('The note was deleted.', 'note_not_found');
      const { id } = await repo.insertSource(tx, { ...v, title });
      if (v.fileName) await repo.setFileName(tx, id, v.fileName);
      await deps.jobs.send('notes.process', { source_id: id }, { tx, singletonKey: `note-source:${id}` });
      return id;
    });
    return { source_id: id, status: 'queued' };
  }

  const uploads = createNoteUploads({ repo: deps.repo, storage: deps.storage, quota: deps.quota, noteOf, queueSource });

  /** Remove a source's file, its vectors (through the index job) and tell the streams. */
  async function forgetSource(projectId: number, noteId: number, s: { id: number; file_name: string | null }) {
    if (s.file_name) await fsp.rm(path.join(await noteDir(projectId, noteId), s.file_name), { force: true });
    await publish(s.id);
  }

  /** Expire idle upload sessions (rows, then bytes) and fail sources whose processing was interrupted. */
  async function sweep(): Promise<{ uploads: number; stuck: number }> {
    const expired = await repo.expireUploads(UPLOAD_IDLE_MS);
    for (const u of expired) await fsp.rm(await uploadFile(u.id), { force: true });
    const stuck = await repo.failStuck(
      new Date(Date.now() - STUCK_MS),
      'Processing was interrupted; delete the source and add it again.',
    );
    for (const s of stuck) await publish(s.id);
    return { uploads: expired.length, stuck: stuck.length };
  }

  return {
    /** Start the sweep (every minute; safe on several instances: each row is removed once). */
    start() {
      timer = setInterval(() => {
        sweep().catch((err) => deps.log.warn({ err: errMessage(err) }, 'notes sweep failed'));
      }, SWEEP_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
    sweep,
    // Sources that arrive as files: multipart, a project file, chunked uploads (notes.uploads.ts).
    ...uploads,

    /** `GET …/notes`: the project's notes, newest first, with `source_count`. */
    async list(actor: Actor, name: string): Promise<NoteSummary[]> {
      const project = await deps.access.project(actor, name);
      return (await repo.list(project.id)).map((n) => ({ ...n, source_count: Number(n.source_count ?? 0) }));
    },

    /** `POST …/notes` `{title, description?}` → `{id, title}`. */
    async create(actor: Actor, name: string, body: { title: string; description?: string }) {
      const project = await deps.access.project(actor, name);
      const title = body.title.trim();
      if (!title) throw new BadRequest('title_required', 'The title is empty.');
      return repo.insert({ projectId: project.id, title, description: body.description ?? '', createdBy: actor.id });
    },

    /** `GET …/notes/:id`: the note with its sources, issue links and chat. @throws 404 `note_not_found`. */
    async get(actor: Actor, name: string, id: number): Promise<NoteDetail> {
      const { project, note } = await noteOf(actor, name, id);
      const [sources, links, chats] = await Promise.all([repo.sources(id), repo.links(id), repo.chats(id, 200)]);
      const coverage = await coverageOf(
        project.id,
        sources.filter((s) => s.status === 'done').map((s) => s.id),
      );
      return {
        id: note.id,
        title: note.title,
        description: note.description,
        created_at: note.created_at,
        source_count: sources.length,
        sources: sources.map((s) => sourceView(s, coverage)),
        issue_links: links,
        chats: chats.map((c) => ({
          role: c.role,
          content: c.content,
          created_at: c.created_at,
          sources: c.sources ?? [],
          citations: c.citations ?? [],
        })),
      };
    },

    /**
     * `DELETE …/notes/:id`: the note, its sources, chat, issue links and upload sessions (one transaction), then
     * its files and the sources' vectors. @throws 404 `note_not_found`.
     */
    async remove(actor: Actor, name: string, id: number): Promise<{ ok: true }> {
      const { project } = await noteOf(actor, name, id);
      const sources = await repo.sources(id);
      const uploads = await repo.uploadIds(id);
      await repo.transaction(async (tx) => {
        if (!(await repo.remove(tx, project.id, id))) throw new NotFound('The note was not found.', 'note_not_found');
        for (const s of sources)
          await deps.jobs.send(
            'knowledge.index',
            { project_id: project.id, doc_type: 'note_source', doc_id: String(s.id) },
            { tx },
          );
      });
      await fsp.rm(await noteDir(project.id, id), { recursive: true, force: true });
      for (const u of uploads) await fsp.rm(await uploadFile(u.id), { force: true });
      for (const s of sources) await publish(s.id);
      return { ok: true };
    },

    /**
     * `POST …/sources` with `{source_type:'youtube'|'web', url, title?}`: only http(s) addresses; a YouTube
     * source must name a video. @throws 400 `invalid_url`; 404.
     */
    async addUrl(actor: Actor, name: string, noteId: number, body: UrlBody) {
      const { project } = await noteOf(actor, name, noteId);
      const url = body.url.trim();
      try {
        checkUrl(url, []);
      } catch (err) {
        // Private addresses are refused when fetched (after DNS resolution); here only the form is checked.
        if (!(err instanceof FetchRefused) || /valid URL|http and https|credentials/.test(err.message))
          throw new BadRequest('invalid_url', err instanceof FetchRefused ? err.message : 'The address is not valid.');
      }
      if (body.source_type === 'youtube' && !youtubeId(url))
        throw new BadRequest(
          'invalid_url',
          'The address is not a YouTube video (youtube.com/watch?v=… or youtu.be/…).',
        );
      return queueSource({
        projectId: project.id,
        noteId,
        type: body.source_type,
        title: body.title,
        defaultTitle: body.source_type === 'youtube' ? `YouTube video ${youtubeId(url)}` : defaultTitle({ url }),
        url,
      });
    },

    /**
     * `PATCH …/sources/:sourceId` `{title}`: empty or null resets to the default name. @throws 404 `source_not_found`.
     */
    async rename(actor: Actor, name: string, noteId: number, sourceId: number, title: string | null) {
      await noteOf(actor, name, noteId);
      const t = title?.trim() ? title.trim().slice(0, 200) : null;
      if (!(await repo.rename(noteId, sourceId, t)))
        throw new NotFound(`Source ${sourceId} was not found in this note.`, 'source_not_found');
      return {};
    },

    /** `DELETE …/sources/:sourceId`: the row, its file and its vectors. @throws 404 `source_not_found`. */
    async removeSource(actor: Actor, name: string, noteId: number, sourceId: number) {
      const { project } = await noteOf(actor, name, noteId);
      const gone = await repo.transaction(async (tx) => {
        const row = await repo.removeSource(tx, noteId, sourceId);
        if (!row) throw new NotFound(`Source ${sourceId} was not found in this note.`, 'source_not_found');
        await deps.jobs.send(
          'knowledge.index',
          { project_id: project.id, doc_type: 'note_source', doc_id: String(sourceId) },
          { tx },
        );
        return row;
      });
      await forgetSource(project.id, noteId, gone);
      return { ok: true };
    },

    /**
     * `GET …/sources/:sourceId/file`: the stored file of a PDF, audio or video source, to open a citation at its page
     * or second (docs/ARCHITECTURE.md, Citations and locations).
     * @returns the file's path, size and media type (by the source's kind and the file's extension).
     * @throws 404 `note_not_found` / `source_not_found` / `no_file` (another kind, or the file is gone).
     */
    async sourceFile(
      actor: Actor,
      name: string,
      noteId: number,
      sourceId: number,
    ): Promise<{ file: string; size: number; type: string; filename: string }> {
      const { project } = await noteOf(actor, name, noteId);
      const s = await repo.source(noteId, sourceId);
      if (!s) throw new NotFound(`Source ${sourceId} was not found in this note.`, 'source_not_found');
      const type = s.file_name ? viewableType(s.source_type, s.file_name) : null;
      if (!type || !s.file_name) throw new NotFound('This source has no file to open.', 'no_file');
      const file = path.join(await noteDir(project.id, noteId), s.file_name);
      const stat = await fsp.stat(file).catch(() => null);
      if (!stat?.isFile()) throw new NotFound('This source has no file to open.', 'no_file');
      return { file, size: stat.size, type, filename: s.title ?? s.default_title };
    },

    /**
     * `GET …/sources/:sourceId/progress`: after the access check, a stream of `progress` `{status, message}`
     * (queued reads as processing), one per change, ending at done or error. Follows the bus (any instance)
     * and reads the row at least every second.
     */
    async progress(actor: Actor, name: string, noteId: number, sourceId: number) {
      await noteOf(actor, name, noteId);
      if (!(await repo.source(noteId, sourceId)))
        throw new NotFound(`Source ${sourceId} was not found in this note.`, 'source_not_found');
      const events = follow<{ status: string; message: string | null }, SseEvent>({
        listen: (notify) => deps.bus.subscribe('notes.source', ({ id }) => id === sourceId && notify()),
        async read() {
          const s = await repo.source(noteId, sourceId);
          if (!s) return { status: 'error', message: 'The source was deleted.' };
          return {
            status: s.status === 'queued' ? 'processing' : s.status,
            message: s.status === 'error' ? (s.error ?? 'Failed') : s.message,
          };
        },
        isDone: (p) => p.status === 'done' || p.status === 'error',
        emit: (p) => [{ event: 'progress', data: p }],
      });
      return { events };
    },

    /** Document loader of the semantic index (`note_source`, `doc_id` the source id): a processed source's text. */
    async loadDocument(projectId: number | null, docId: string): Promise<LoadedDocument | null> {
      if (projectId === null || !/^\d{1,9}$/.test(docId)) return null;
      const s = await repo.sourceById(Number(docId));
      if (!s || s.project_id !== projectId || s.status !== 'done' || !s.content_text) return null;
      const text = cutText(s.content_text, INDEX_MAX_CHARS);
      return {
        title: s.title ?? s.default_title,
        text,
        scope: 'project',
        marks: s.content_marks?.filter((m) => m.at < text.length),
        fullChars: s.content_text.length,
      };
    },

    /** Notes and their issue links of a project (the knowledge graph of the pins area). */
    graph: (projectId: number) => repo.graph(projectId),
  };
}

export type NotesService = ReturnType<typeof createNotesService>;

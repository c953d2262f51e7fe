/**
 * SQL of the notes area: `notes`, `note_sources`, `note_chat_messages`, `note_issue_links` and
 * `note_uploads` (chunked-upload sessions). Every query is scoped by project (and note) id.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB, NoteSourceStatus, NoteSourceType } from '../../db/types.ts';
import type { TextMark } from '../../lib/doc-sources.ts';
import type { Citation } from './notes.rules.ts';

type Executor = Kysely<DB> | Transaction<DB>;

const SOURCE_COLS = [
  'id',
  'note_id',
  'project_id',
  'source_type',
  'title',
  'default_title',
  'url',
  'file_name',
  'mime',
  'size_bytes',
  'status',
  'message',
  'error',
  'content_text',
  'content_marks',
  'duration_seconds',
  'created_at',
  'updated_at',
] as const;

export function createNotesRepo(db: Kysely<DB>) {
  return {
    /** Bytes of the sources' extracted texts of these projects (UTF-8), for storage quotas (their files are walked). */
    async storageBytes(projectIds: number[]): Promise<number> {
      if (!projectIds.length) return 0;
      const r = await db
        .selectFrom('note_sources')
        .select(sql<string>`coalesce(sum(octet_length(content_text)), 0)::bigint`.as('n'))
        .where('project_id', 'in', projectIds)
        .executeTakeFirst();
      return Number(r?.n ?? 0);
    },

    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** Notes of a project, newest first, with their source counts. */
    list: (projectId: number) =>
      db
        .selectFrom('notes as n')
        .select((eb) => [
          'n.id',
          'n.title',
          'n.description',
          'n.created_at',
          eb
            .selectFrom('note_sources as s')
            .whereRef('s.note_id', '=', 'n.id')
            .select(eb.fn.countAll<number>().as('c'))
            .as('source_count'),
        ])
        .where('n.project_id', '=', projectId)
        .orderBy('n.id', 'desc')
        .execute(),

    /** One note of a project, or undefined. */
    find: (projectId: number, id: number, ex: Executor = db) =>
      ex
        .selectFrom('notes')
        .select(['id', 'project_id', 'title', 'description', 'created_at'])
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst(),

    insert: (v: { projectId: number; title: string; description: string; createdBy: number }) =>
      db
        .insertInto('notes')
        .values({ project_id: v.projectId, title: v.title, description: v.description, created_by: v.createdBy })
        .returning(['id', 'title'])
        .executeTakeFirstOrThrow(),

    /** Delete a note (sources, chats, links and upload sessions cascade). @returns the deleted sources' ids. */
    async remove(tx: Transaction<DB>, projectId: number, id: number): Promise<boolean> {
      const r = await tx
        .deleteFrom('notes')
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    /** Sources of a note, oldest first (with their text). */
    sources: (noteId: number, ex: Executor = db) =>
      ex.selectFrom('note_sources').select(SOURCE_COLS).where('note_id', '=', noteId).orderBy('id').execute(),

    /** One source of a note, or undefined. */
    source: (noteId: number, id: number, ex: Executor = db) =>
      ex
        .selectFrom('note_sources')
        .select(SOURCE_COLS)
        .where('note_id', '=', noteId)
        .where('id', '=', id)
        .executeTakeFirst(),

    /** One source by id alone (the processing job, the index loader). */
    sourceById: (id: number) =>
      db.selectFrom('note_sources').select(SOURCE_COLS).where('id', '=', id).executeTakeFirst(),

    insertSource: (
      tx: Executor,
      v: {
        noteId: number;
        projectId: number;
        type: NoteSourceType;
        title: string | null;
        defaultTitle: string;
        url?: string | null;
        mime?: string | null;
        size?: number | null;
      },
    ) =>
      tx
        .insertInto('note_sources')
        .values({
          note_id: v.noteId,
          project_id: v.projectId,
          source_type: v.type,
          title: v.title,
          default_title: v.defaultTitle,
          url: v.url ?? null,
          mime: v.mime ?? null,
          size_bytes: v.size ?? null,
          message: 'Queued',
        })
        .returning('id')
        .executeTakeFirstOrThrow(),

    setFileName: (tx: Executor, id: number, fileName: string) =>
      tx.updateTable('note_sources').set({ file_name: fileName }).where('id', '=', id).execute(),

    rename: (noteId: number, id: number, title: string | null) =>
      db
        .updateTable('note_sources')
        .set({ title, updated_at: sql`now()` })
        .where('note_id', '=', noteId)
        .where('id', '=', id)
        .executeTakeFirst()
        .then((r) => Number(r.numUpdatedRows) > 0),

    removeSource: (tx: Executor, noteId: number, id: number) =>
      tx
        .deleteFrom('note_sources')
        .where('note_id', '=', noteId)
        .where('id', '=', id)
        .returning(['id', 'file_name'])
        .executeTakeFirst(),

    /**
     * Claim a queued source for processing (atomic: a duplicate job finds nothing); a retried job may take
     * back its own source left `processing`. @returns the source, or undefined.
     */
    claim: (id: number, retry: boolean) =>
      db
        .updateTable('note_sources')
        .set({ status: 'processing', message: 'Starting', processing_since: sql`now()`, updated_at: sql`now()` })
        .where('id', '=', id)
        .where((eb) =>
          retry ? eb('status', 'in', ['queued', 'processing'] as NoteSourceStatus[]) : eb('status', '=', 'queued'),
        )
        .returning(SOURCE_COLS)
        .executeTakeFirst(),

    /** The progress message of a processing source. */
    progress: (id: number, message: string) =>
      db
        .updateTable('note_sources')
        .set({ message, updated_at: sql`now()` })
        .where('id', '=', id)
        .where('status', '=', 'processing')
        .execute(),

    /** Finish a processing source: done with its text, or error with the reason. */
    finish: (
      tx: Executor,
      id: number,
      v:
        | { status: 'done'; text: string; durationSeconds?: number | null; title?: string; marks?: TextMark[] }
        | { status: 'error'; error: string },
    ) =>
      tx
        .updateTable('note_sources')
        .set(
          v.status === 'done'
            ? {
                status: 'done',
                content_text: v.text,
                content_marks: v.marks?.length ? JSON.stringify(v.marks) : null,
                duration_seconds: v.durationSeconds ?? null,
                message: 'Done',
                error: null,
                processing_since: null,
                updated_at: sql`now()`,
                ...(v.title ? { default_title: v.title.slice(0, 200) } : {}),
              }
            : {
                status: 'error',
                error: v.error,
                message: 'Failed',
                processing_since: null,
                updated_at: sql`now()`,
              },
        )
        .where('id', '=', id)
        .where('status', '=', 'processing')
        .executeTakeFirst()
        .then((r) => Number(r.numUpdatedRows) > 0),

    /** Sources stuck in processing since before `before` (their process died) → error. @returns their ids. */
    failStuck: (before: Date, reason: string) =>
      db
        .updateTable('note_sources')
        .set({ status: 'error', error: reason, message: 'Failed', processing_since: null, updated_at: sql`now()` })
        .where('status', '=', 'processing')
        .where('processing_since', '<', before)
        .returning('id')
        .execute(),

    // Issue links and chat.

    links: (noteId: number) =>
      db
        .selectFrom('note_issue_links')
        .select(['issue_id', 'title'])
        .where('note_id', '=', noteId)
        .orderBy('created_at')
        .execute(),

    link: (noteId: number, issueId: number, title: string) =>
      db
        .insertInto('note_issue_links')
        .values({ note_id: noteId, issue_id: issueId, title })
        .onConflict((oc) => oc.columns(['note_id', 'issue_id']).doUpdateSet({ title }))
        .execute(),

    /** The note's chat, oldest first (the newest `limit`). */
    async chats(noteId: number, limit: number) {
      const rows = await db
        .selectFrom('note_chat_messages')
        .select(['id', 'role', 'content', 'sources', 'citations', 'created_at'])
        .where('note_id', '=', noteId)
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.reverse();
    },

    insertChat: (v: {
      noteId: number;
      userId: number;
      role: 'user' | 'assistant';
      content: string;
      sources?: Array<{ source_id: number; title: string }>;
      /** The answer's citations (notes.rules.ts `citationsOf`). */
      citations?: Citation[];
    }) =>
      db
        .insertInto('note_chat_messages')
        .values({
          note_id: v.noteId,
          user_id: v.userId,
          role: v.role,
          content: v.content,
          sources: JSON.stringify(v.sources ?? []),
          citations: JSON.stringify(v.citations ?? []),
        })
        .returning('id')
        .executeTakeFirstOrThrow()
        .then((r) => r.id),

    /** Notes and note → issue links of a project (the knowledge graph). */
    async graph(projectId: number) {
      const notes = await db.selectFrom('notes').select(['id', 'title']).where('project_id', '=', projectId).execute();
      const links = await db
        .selectFrom('note_issue_links as l')
        .innerJoin('notes as n', 'n.id', 'l.note_id')
        .select(['l.note_id', 'l.issue_id'])
        .where('n.project_id', '=', projectId)
        .execute();
      return { notes, links };
    },

    // Upload sessions.

    /** Take the user's upload-session lock inside `tx` (so two inits at the limit cannot both pass). */
    async lockUser(tx: Transaction<DB>, userId: number): Promise<void> {
      await sql`select pg_advisory_xact_lock(hashtext(${`note_uploads:${userId}`}))`.execute(tx);
    },

    /** Live sessions of a user (touched within `idleMs`). */
    liveUploads: (tx: Executor, userId: number, idleMs: number) =>
      tx
        .selectFrom('note_uploads')
        .select((eb) => eb.fn.countAll<number>().as('c'))
        .where('user_id', '=', userId)
        .where('updated_at', '>', sql<Date>`now() - ${`${idleMs} milliseconds`}::interval`)
        .executeTakeFirstOrThrow()
        .then((r) => Number(r.c)),

    insertUpload: (
      tx: Executor,
      v: {
        id: string;
        noteId: number;
        projectId: number;
        userId: number;
        filename: string;
        mime: string;
        type: NoteSourceType;
        size: number;
        chunkSize: number;
      },
    ) =>
      tx
        .insertInto('note_uploads')
        .values({
          id: v.id,
          note_id: v.noteId,
          project_id: v.projectId,
          user_id: v.userId,
          filename: v.filename,
          mime: v.mime,
          source_type: v.type,
          size_bytes: v.size,
          chunk_size: v.chunkSize,
        })
        .execute(),

    upload: (noteId: number, id: string) =>
      db.selectFrom('note_uploads').selectAll().where('note_id', '=', noteId).where('id', '=', id).executeTakeFirst(),

    /**
     * Take the write lease of chunk `index` of a live session: only when it is the next index and no other
     * request holds a fresh lease. @returns the session, or undefined.
     */
    leaseChunk: (id: string, index: number, idleMs: number, leaseMs: number) =>
      db
        .updateTable('note_uploads')
        .set({ writing_since: sql`now()`, updated_at: sql`now()` })
        .where('id', '=', id)
        .where('next_index', '=', index)
        .where('updated_at', '>', sql<Date>`now() - ${`${idleMs} milliseconds`}::interval`)
        .where((eb) =>
          eb.or([
            eb('writing_since', 'is', null),
            eb('writing_since', '<', sql<Date>`now() - ${`${leaseMs} milliseconds`}::interval`),
          ]),
        )
        .returningAll()
        .executeTakeFirst(),

    /** A chunk was written: advance the session and drop the lease. */
    chunkWritten: (id: string, index: number, bytes: number) =>
      db
        .updateTable('note_uploads')
        .set((eb) => ({
          next_index: index + 1,
          received_bytes: eb('received_bytes', '+', bytes),
          writing_since: null,
          updated_at: sql`now()`,
        }))
        .where('id', '=', id)
        .where('next_index', '=', index)
        .returning(['received_bytes'])
        .executeTakeFirst(),

    /** Drop a lease without advancing (the chunk failed). */
    releaseChunk: (id: string) =>
      db.updateTable('note_uploads').set({ writing_since: null }).where('id', '=', id).execute(),

    deleteUpload: (id: string, ex: Executor = db) =>
      ex.deleteFrom('note_uploads').where('id', '=', id).returning('id').executeTakeFirst(),

    /** Remove sessions idle longer than `idleMs`. @returns their ids (their files are the caller's). */
    expireUploads: (idleMs: number) =>
      db
        .deleteFrom('note_uploads')
        .where('updated_at', '<', sql<Date>`now() - ${`${idleMs} milliseconds`}::interval`)
        .returning('id')
        .execute(),

    /** Upload sessions of a note (removed with the note). */
    uploadIds: (noteId: number) => db.selectFrom('note_uploads').select('id').where('note_id', '=', noteId).execute(),

    // Personal data.

    /** A project's notes with sources (no file bytes), chats and links, for the export. */
    async exportProject(projectId: number) {
      const notes = await db
        .selectFrom('notes')
        .select(['id', 'title', 'description', 'created_at'])
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute();
      const ids = notes.map((n) => n.id);
      if (!ids.length) return [];
      const [sources, chats, links] = await Promise.all([
        db
          .selectFrom('note_sources')
          .select([
            'id',
            'note_id',
            'source_type',
            'title',
            'default_title',
            'url',
            'status',
            'error',
            'content_text',
            'created_at',
          ])
          .where('note_id', 'in', ids)
          .orderBy('id')
          .execute(),
        db
          .selectFrom('note_chat_messages')
          .select(['note_id', 'role', 'content', 'created_at'])
          .where('note_id', 'in', ids)
          .orderBy('id')
          .execute(),
        db
          .selectFrom('note_issue_links')
          .select(['note_id', 'issue_id', 'title'])
          .where('note_id', 'in', ids)
          .execute(),
      ]);
      return notes.map((n) => ({
        ...n,
        sources: sources.filter((s) => s.note_id === n.id).map(({ note_id: _, ...s }) => s),
        chats: chats.filter((c) => c.note_id === n.id).map(({ note_id: _, ...c }) => c),
        issue_links: links.filter((l) => l.note_id === n.id).map(({ note_id: _, ...l }) => l),
      }));
    },

    /** Delete a project's notes (and, by cascade, their sources, chats, links, sessions) in the erasure. */
    eraseProject: (tx: Transaction<DB>, projectId: number) =>
      tx.deleteFrom('notes').where('project_id', '=', projectId).execute(),

    /** Ids of a project's sources (vectors to remove after an erasure). */
    sourceIdsOfProject: (projectId: number) =>
      db.selectFrom('note_sources').select(['id']).where('project_id', '=', projectId).execute(),
  };
}

export type NotesRepo = ReturnType<typeof createNotesRepo>;

/** The transcripts area's SQL: transcript rows and the pipeline's lease. */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types.ts';

export type TranscriptRow = Awaited<ReturnType<ReturnType<typeof createTranscriptsRepo>['byId']>> & object;

/** What one update of the pipeline may set. */
export interface TranscriptPatch {
  status?: string;
  progress_pct?: number;
  step_label?: string;
  error?: string | null;
  transcript_text?: string;
  /** The speech server's segments in milliseconds (citations' timecodes). */
  transcript_segments?: Array<{ start_ms: number; end_ms: number; text: string }> | null;
  summary_json?: unknown;
  frames_json?: Array<{ ts_ms: number; description: string | null }>;
  frames_dropped?: number;
  source_file?: string | null;
  finished_step?: string | null;
  pending?: boolean;
  interruptions?: number;
  finished?: boolean;
}

export function createTranscriptsRepo(db: Kysely<DB>) {
  const columns = [
    'id',
    'project_id',
    'user_id',
    'job_id',
    'filename',
    'mime',
    'kind',
    'size_bytes',
    'embed_to_rag',
    'trial_mode',
    'status',
    'progress_pct',
    'step_label',
    'error',
    'transcript_text',
    'summary_json',
    'frames_json',
    'frames_dropped',
    'source_file',
    'finished_step',
    'pending',
    'interruptions',
    'created_at',
    'updated_at',
    'finished_at',
  ] as const;

  return {
    /**
     * Bytes the transcripts of these projects hold, for storage quotas: their uploaded files still kept (the file's
     * size) and their texts (UTF-8).
     */
    async storageBytes(projectIds: number[]): Promise<number> {
      if (!projectIds.length) return 0;
      const r = await db
        .selectFrom('transcripts')
        .select(
          sql<string>`coalesce(sum(case when source_file is null then 0 else size_bytes end + coalesce(octet_length(transcript_text), 0)), 0)::bigint`.as(
            'n',
          ),
        )
        .where('project_id', 'in', projectIds)
        .executeTakeFirst();
      return Number(r?.n ?? 0);
    },

    /** Run `fn` in one transaction. */
    transaction: <T>(fn: (tx: Transaction<DB>) => Promise<T>) => db.transaction().execute(fn),

    async insert(
      tx: Transaction<DB>,
      r: {
        projectId: number;
        userId: number;
        jobId: string;
        filename: string;
        mime: string;
        kind: 'audio' | 'video';
        sizeBytes: number;
        embedToRag: boolean;
        trialMode: boolean;
        sourceFile: string;
      },
    ): Promise<number> {
      const row = await tx
        .insertInto('transcripts')
        .values({
          project_id: r.projectId,
          user_id: r.userId,
          job_id: r.jobId,
          filename: r.filename,
          mime: r.mime,
          kind: r.kind,
          size_bytes: r.sizeBytes,
          embed_to_rag: r.embedToRag,
          trial_mode: r.trialMode,
          source_file: r.sourceFile,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    byId: (id: number) => db.selectFrom('transcripts').select(columns).where('id', '=', id).executeTakeFirst(),

    inProject: (projectId: number, id: number) =>
      db
        .selectFrom('transcripts')
        .select(columns)
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst(),

    byJob: (projectId: number, jobId: string) =>
      db
        .selectFrom('transcripts')
        .select(columns)
        .where('project_id', '=', projectId)
        .where('job_id', '=', jobId)
        .executeTakeFirst(),

    /** A project's transcripts, newest first, ids below `cursor` when given; `limit + 1` rows to tell if more follow. */
    list: (projectId: number, limit: number, cursor?: number) =>
      db
        .selectFrom('transcripts')
        .select([
          'id',
          'job_id',
          'filename',
          'kind',
          'size_bytes',
          'status',
          'progress_pct',
          'step_label',
          'error',
          'embed_to_rag',
          'created_at',
          'updated_at',
          'finished_at',
          sql<string | null>`summary_json->>'tldr'`.as('tldr'),
        ])
        .where('project_id', '=', projectId)
        .$if(cursor !== undefined, (q) => q.where('id', '<', cursor!))
        .orderBy('id', 'desc')
        .limit(limit + 1)
        .execute(),

    /** Apply `p` to transcript `id`; @returns the row as it is afterwards (undefined when it is gone). */
    async update(id: number, p: TranscriptPatch) {
      const { finished, summary_json, frames_json, transcript_segments, ...rest } = p;
      return db
        .updateTable('transcripts')
        .set({
          ...rest,
          ...(summary_json !== undefined ? { summary_json: JSON.stringify(summary_json) } : {}),
          ...(frames_json !== undefined ? { frames_json: JSON.stringify(frames_json) } : {}),
          ...(transcript_segments !== undefined
            ? { transcript_segments: transcript_segments ? JSON.stringify(transcript_segments) : null }
            : {}),
          ...(finished ? { finished_at: sql<Date>`now()` } : {}),
          updated_at: sql<Date>`now()`,
        })
        .where('id', '=', id)
        .returning(columns)
        .executeTakeFirst();
    },

    /** Mark a summary retry: only a row resting after a failed summary (not pending, no summary). */
    async requeueSummary(id: number, label: string) {
      return db
        .updateTable('transcripts')
        .set({ pending: true, error: null, step_label: label, updated_at: sql<Date>`now()` })
        .where('id', '=', id)
        .where('pending', '=', false)
        .where('status', 'in', ['transcribed', 'frames_extracted'])
        .where('summary_json', 'is', null)
        .returning(columns)
        .executeTakeFirst();
    },

    /** The oldest transcript the pipeline has work for. */
    nextPending: () =>
      db
        .selectFrom('transcripts')
        .select(columns)
        .where('pending', '=', true)
        .orderBy('id')
        .limit(1)
        .executeTakeFirst(),

    async hasPending(): Promise<boolean> {
      return !!(await db
        .selectFrom('transcripts')
        .select('id')
        .where('pending', '=', true)
        .limit(1)
        .executeTakeFirst());
    },

    /**
     * Take or renew the pipeline's lease for `holder` for `seconds`: granted when it is free, expired, or
     * already this holder's. One row, updated atomically, so two instances cannot both hold it.
     */
    async takeLease(holder: string, seconds: number, transcriptId: number | null): Promise<boolean> {
      const r = await sql`
        update transcript_lease
           set holder = ${holder}, transcript_id = ${transcriptId},
               expires_at = now() + make_interval(secs => ${seconds})
         where id = 1 and (holder is null or holder = ${holder} or expires_at < now())
         returning id`.execute(db);
      return r.rows.length === 1;
    },

    /** Whether nobody holds the lease (free or expired). */
    async leaseFree(): Promise<boolean> {
      const r = await sql<{ free: boolean }>`select (holder is null or expires_at < now()) as free
                                               from transcript_lease where id = 1`.execute(db);
      return !!r.rows[0]?.free;
    },

    /** Release the lease when `holder` has it. */
    async releaseLease(holder: string): Promise<void> {
      await sql`update transcript_lease set holder = null, transcript_id = null, expires_at = 'epoch'
                where id = 1 and holder = ${holder}`.execute(db);
    },

    /** Free the lease when one of `holders` has it. @returns whether it was freed. */
    async releaseLeaseOf(holders: string[]): Promise<boolean> {
      if (!holders.length) return false;
      const r = await sql`update transcript_lease set holder = null, transcript_id = null, expires_at = 'epoch'
                where id = 1 and holder in (${sql.join(holders)}) returning id`.execute(db);
      return r.rows.length > 0;
    },

    /** Free the lease whoever holds it (the embedded database at start: no other process can hold it). */
    async clearLease(): Promise<void> {
      await sql`update transcript_lease set holder = null, transcript_id = null, expires_at = 'epoch' where id = 1`.execute(
        db,
      );
    },

    /** Every stored source file and the ids of rows still holding files (orphan sweep). */
    async liveFiles(): Promise<{ sources: Set<string>; ids: Set<number> }> {
      const rows = await db
        .selectFrom('transcripts')
        .select(['id', 'source_file', 'status'])
        .where('status', 'not in', ['done', 'failed'])
        .execute();
      return {
        sources: new Set(rows.map((r) => r.source_file).filter((s): s is string => !!s)),
        ids: new Set(rows.map((r) => r.id)),
      };
    },

    /** Rows of the given projects, for the privacy export. */
    forProject: (projectId: number) =>
      db
        .selectFrom('transcripts')
        .select([
          'id',
          'job_id',
          'filename',
          'mime',
          'kind',
          'size_bytes',
          'status',
          'error',
          'transcript_text',
          'summary_json',
          'frames_json',
          'embed_to_rag',
          'created_at',
          'finished_at',
        ])
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute(),

    /** Ids of the rows of a project or uploaded by a user (erasure: their vectors). */
    idsOf: (ex: Kysely<DB> | Transaction<DB>, by: { projectId?: number; userId?: number }) =>
      ex
        .selectFrom('transcripts')
        .select(['id', 'project_id', 'source_file'])
        .$if(by.projectId !== undefined, (q) => q.where('project_id', '=', by.projectId!))
        .$if(by.userId !== undefined, (q) => q.where('user_id', '=', by.userId!))
        .execute(),

    async deleteFor(tx: Transaction<DB>, by: { projectId?: number; userId?: number }): Promise<void> {
      await tx
        .deleteFrom('transcripts')
        .$if(by.projectId !== undefined, (q) => q.where('project_id', '=', by.projectId!))
        .$if(by.userId !== undefined, (q) => q.where('user_id', '=', by.userId!))
        .execute();
    },

    /** The transcript of a document of the semantic index (its loader). */
    document: (projectId: number, id: number) =>
      db
        .selectFrom('transcripts')
        .select([
          'filename',
          'transcript_text',
          'transcript_segments',
          'summary_json',
          'frames_json',
          'status',
          'embed_to_rag',
        ])
        .where('project_id', '=', projectId)
        .where('id', '=', id)
        .executeTakeFirst(),
  };
}

export type TranscriptsRepo = ReturnType<typeof createTranscriptsRepo>;

/**
 * Meeting transcripts (docs/ARCHITECTURE.md, Meeting transcripts and voice dictation). The owner of a
 * project or an admin uploads a recording; the pipeline (transcripts.pipeline.ts) turns it into text, frames
 * descriptions, a summary and a `transcript` document of the semantic index. Routes call one method each.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Multipart } from '@fastify/multipart';
import type { Static } from 'typebox';
import type { Access } from '../../access/access.ts';
import type { Actor } from '../../http/auth.ts';
import { AppError, BadRequest, Conflict, NotFound, PayloadTooLarge, Upstream } from '../../http/errors.ts';
import type { Bus } from '../../lib/bus.ts';
import { follow } from '../../lib/follow.ts';
import type { LoadedDocument } from '../../lib/doc-sources.ts';
import type { Media } from '../../lib/media.ts';
import type { SpeechProvider } from '../../providers/speech/index.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { TranscriptsRepo } from './transcripts.repo.ts';
import {
  ACCEPTED_MIMES,
  bareMime,
  classifyUpload,
  clock,
  PAGE_DEFAULT,
  segmentMarks,
  TERMINAL,
  type TranscriptSummary,
  type Status,
} from './transcripts.rules.ts';
import type { Detail, List } from './transcripts.schemas.ts';
import type { StorageQuota } from '../usage/usage.storage.ts';

/** Progress as the stream sends it. */
export interface Progress {
  status: string;
  progress_pct: number;
  step_label: string;
  error: string | null;
}

type Row = NonNullable<Awaited<ReturnType<TranscriptsRepo['byId']>>>;

const detailOf = (r: Row): Static<typeof Detail> => ({
  transcript_id: r.id,
  job_id: r.job_id,
  filename: r.filename,
  kind: r.kind,
  mime: r.mime,
  size_bytes: Number(r.size_bytes),
  status: r.status as Static<typeof Detail>['status'],
  progress_pct: r.progress_pct,
  step_label: r.step_label,
  error: r.error,
  embed_to_rag: r.embed_to_rag,
  transcript_text: r.transcript_text,
  summary_json: (r.summary_json as TranscriptSummary | null) ?? null,
  frames_json: r.frames_json ?? null,
  created_at: r.created_at,
  updated_at: r.updated_at,
  finished_at: r.finished_at,
});

export function createTranscriptsService(deps: {
  repo: TranscriptsRepo;
  access: Access;
  jobs: Pick<JobQueue, 'send'>;
  media: Pick<Media, 'available'>;
  speech: Pick<SpeechProvider, 'available'>;
  bus: Bus;
  /** `DATA_DIR/transcripts`. */
  root: string;
  /** Largest upload in bytes (TRANSCRIPTS_UPLOAD_LIMIT_BYTES, 1 GB by default). */
  uploadLimitBytes: number;
  /** The owner's storage quota and the disk floor, asked before and after receiving (usage.storage.ts). */
  quota: Pick<StorageQuota, 'reserve'>;
}) {
  const { repo, access } = deps;
  const notFound = () => new NotFound('No transcript with this id in this project.', 'transcript_not_found');

  return {
    uploadLimitBytes: deps.uploadLimitBytes,

    /**
     * `POST /projects/:name/transcripts/upload`: stream multipart `file` to disk (never buffered), check
     * `filename` and the MIME/extension allow-lists, store the row and queue the pipeline in one transaction.
     * `parts` is read only after the access check.
     * @returns 202 `{transcript_id, job_id, status:'queued'}`.
     * @throws 400 `file_required` | `filename_required` | `invalid_mime` | `invalid_extension` | `invalid_request`;
     *   403/404 (project); 413 `payload_too_large` over the limit; 503 `speech_unavailable` (no SPEECH_URL) or
     *   `ffmpeg_unavailable`; 500 `disk_write_failed` (nothing is left behind); 413 `storage_quota_exceeded`
     *   `{used_bytes, quota_bytes}` and 507 `insufficient_storage` (the owner's quota, the disk floor; checked before
     *   the first byte and once the file is received).
     */
    async upload(actor: Actor, name: string, parts: () => AsyncIterableIterator<Multipart>) {
      const project = await access.project(actor, name);
      if (!deps.speech.available)
        throw new Upstream(503, 'speech_unavailable', 'No speech server is configured; transcripts need one.');
      if (!(await deps.media.available()))
        throw new Upstream(503, 'ffmpeg_unavailable', 'ffmpeg is not installed on the server; transcripts need it.');
      await deps.quota.reserve(project.owner_id, 0);
      const incoming = path.join(deps.root, 'incoming');
      const stored = `${crypto.randomUUID()}`;
      let tmp: string | null = null;
      let mime = '';
      let size = 0;
      let filename: string | undefined;
      let embed = 'true';
      const cleanup = async () => {
        if (tmp) await fsp.rm(tmp, { force: true }).catch(() => {});
      };
      try {
        for await (const part of parts()) {
          if (part.type === 'field') {
            if (part.fieldname === 'filename') filename = String(part.value ?? '');
            else if (part.fieldname === 'embed_to_rag')
              embed = String(part.value ?? '')
                .trim()
                .toLowerCase();
            continue;
          }
          if (part.fieldname !== 'file' || tmp) {
            part.file.resume();
            continue;
          }
          mime = bareMime(part.mimetype);
          if (!ACCEPTED_MIMES.has(mime)) {
            part.file.resume();
            throw new BadRequest('invalid_mime', 'This file type is not accepted; upload audio or video.');
          }
          try {
            await fsp.mkdir(incoming, { recursive: true });
            tmp = path.join(incoming, `${stored}.part`);
            await pipeline(part.file, fs.createWriteStream(tmp, { flags: 'wx' }));
          } catch (err) {
            if (err instanceof AppError) throw err;
            if ((part.file as { truncated?: boolean }).truncated) throw tooLarge(deps.uploadLimitBytes);
            throw diskFailure();
          }
          if (part.file.truncated) throw tooLarge(deps.uploadLimitBytes);
          size = (await fsp.stat(tmp)).size;
        }
        if (!tmp) throw new BadRequest('file_required', 'The multipart field `file` is required.');
        if (!filename?.trim()) throw new BadRequest('filename_required', 'The multipart field `filename` is required.');
        if (filename.length > 255)
          throw new BadRequest('invalid_filename', 'The file name may have at most 255 characters.');
        if (!['true', 'false', '1', '0', ''].includes(embed))
          throw new BadRequest('invalid_request', 'embed_to_rag must be true or false.');
        const c = classifyUpload(filename, mime);
        if (!c.ok)
          throw c.reason === 'bad_mime'
            ? new BadRequest('invalid_mime', 'The file type does not match the file name.')
            : new BadRequest(
                'invalid_extension',
                'The file name must end in mp3, wav, m4a, aac, ogg, opus, flac, mp4, mov, webm or mkv.',
              );
        if (size === 0) throw new BadRequest('empty_file', 'The uploaded file is empty.');
        await deps.quota.reserve(project.owner_id, size);
        const rel = `incoming/${stored}.${c.ext}`;
        try {
          await fsp.rename(tmp, path.join(deps.root, rel));
        } catch {
          throw diskFailure();
        }
        tmp = path.join(deps.root, rel);
        const jobId = crypto.randomUUID();
        const id = await repo.transaction(async (tx) => {
          const id = await repo.insert(tx, {
            projectId: project.id,
            userId: actor.id,
            jobId,
            filename: filename!.trim(),
            mime,
            kind: c.kind,
            sizeBytes: size,
            embedToRag: embed !== 'false' && embed !== '0',
            trialMode: !!project.trial_mode,
            sourceFile: rel,
          });
          await deps.jobs.send('transcripts.pump', {}, { singletonKey: 'transcripts', tx });
          return id;
        });
        tmp = null;
        return { transcript_id: id, job_id: jobId, status: 'queued' as const };
      } finally {
        await cleanup();
      }
    },

    /**
     * `GET /projects/:name/transcripts`: newest first, `limit` (default 20), `cursor=<id>` → `{items, next_cursor}`.
     */
    async list(actor: Actor, name: string, q: { limit?: number; cursor?: number }): Promise<Static<typeof List>> {
      const project = await access.project(actor, name);
      const limit = q.limit ?? PAGE_DEFAULT;
      const rows = await repo.list(project.id, limit, q.cursor);
      const page = rows.slice(0, limit);
      return {
        items: page.map((r) => ({
          transcript_id: r.id,
          job_id: r.job_id,
          filename: r.filename,
          kind: r.kind,
          size_bytes: Number(r.size_bytes),
          status: r.status as Static<typeof Detail>['status'],
          progress_pct: r.progress_pct,
          step_label: r.step_label,
          error: r.error,
          embed_to_rag: r.embed_to_rag,
          tldr: r.tldr,
          created_at: r.created_at,
          updated_at: r.updated_at,
          finished_at: r.finished_at,
        })),
        next_cursor: rows.length > limit ? page[page.length - 1].id : null,
      };
    },

    /** `GET /projects/:name/transcripts/:id`: the full row, `summary_json` and `frames_json` parsed. @throws 404. */
    async get(actor: Actor, name: string, id: number) {
      const project = await access.project(actor, name);
      const row = await repo.inProject(project.id, id);
      if (!row) throw notFound();
      return detailOf(row);
    },

    /**
     * Re-run the summary of a transcript whose summary failed (status transcribed or frames_extracted, no
     * summary). @returns `{transcript_id, job_id, status}`. @throws 404; 409 `not_retryable` otherwise.
     */
    async retrySummary(actor: Actor, name: string, id: number) {
      const project = await access.project(actor, name);
      const row = await repo.inProject(project.id, id);
      if (!row) throw notFound();
      const updated = await repo.requeueSummary(row.id, 'Summary queued');
      if (!updated)
        throw new Conflict('not_retryable', 'Only a transcript whose summary failed can have its summary retried.');
      await deps.jobs.send('transcripts.pump', {}, { singletonKey: 'transcripts' });
      await deps.bus.publish('transcript.progress', {
        job_id: updated.job_id,
        status: updated.status,
        progress_pct: updated.progress_pct,
        step_label: updated.step_label,
        error: updated.error,
      });
      return { transcript_id: updated.id, job_id: updated.job_id, status: updated.status as Status };
    },

    /**
     * `SSE /projects/:name/transcripts/job/:jobId/progress`: the current state at once, then `progress` on every
     * change (from any instance, through the bus; the row is also re-read every second so nothing is missed),
     * and `end` at a terminal status (also when the job had finished before the stream opened).
     * @throws 404 `transcript_not_found` (before the stream opens).
     */
    async progress(actor: Actor, name: string, jobId: string) {
      const project = await access.project(actor, name);
      const first = await repo.byJob(project.id, jobId);
      if (!first) throw notFound();
      const id = first.id;
      const events = follow<Progress, { event: string; data: Progress }>({
        listen: (notify) =>
          deps.bus.subscribe('transcript.progress', (p) => {
            if (p.job_id === jobId)
              notify({ status: p.status, progress_pct: p.progress_pct, step_label: p.step_label, error: p.error });
          }),
        read: async () => {
          const r = await repo.byId(id);
          return r ? progressOf(r) : undefined;
        },
        isDone: (p) => TERMINAL.has(p.status),
        emit: (p) => [{ event: 'progress', data: p }],
        end: (_how, p) => (p ? [{ event: 'end', data: p }] : []),
      });
      return { events };
    },

    /** The semantic index's loader of `transcript` documents: filename, summary, frames and text; null when gone. */
    async loadDocument(projectId: number | null, docId: string): Promise<LoadedDocument | null> {
      if (projectId === null || !/^[0-9]{1,10}$/.test(docId)) return null;
      const r = await repo.document(projectId, Number(docId));
      if (!r || !r.embed_to_rag || !r.transcript_text) return null;
      const s = r.summary_json as TranscriptSummary | null;
      const parts = [`# ${r.filename}`];
      if (s) {
        parts.push('## Summary', s.tldr);
        if (s.key_points.length) parts.push('## Key points', ...s.key_points.map((k) => `- ${k}`));
        if (s.decisions.length) parts.push('## Decisions', ...s.decisions.map((k) => `- ${k}`));
        if (s.action_items.length)
          parts.push('## Action items', ...s.action_items.map((a) => `- ${a.task}${a.owner ? ` (${a.owner})` : ''}`));
      }
      if (r.frames_json?.length)
        parts.push(
          '## What the video showed',
          ...r.frames_json.map((f) => `- [${clock(f.ts_ms)}] ${f.description ?? ''}`),
        );
      parts.push('## Transcript');
      const base = parts.join('\n\n').length + 2;
      parts.push(r.transcript_text);
      return {
        title: r.filename,
        text: parts.join('\n\n'),
        scope: 'project',
        marks: segmentMarks(r.transcript_text, r.transcript_segments ?? [], base),
      };
    },
  };
}

const progressOf = (r: Row): Progress => ({
  status: r.status,
  progress_pct: r.progress_pct,
  step_label: r.step_label,
  error: r.error,
});

const tooLarge = (limit: number) =>
  new PayloadTooLarge('The recording is larger than the upload limit.', 'payload_too_large', { limit_bytes: limit });
const diskFailure = () => new AppError(500, 'disk_write_failed', 'The upload could not be written to disk; try again.');

export type TranscriptsService = ReturnType<typeof createTranscriptsService>;

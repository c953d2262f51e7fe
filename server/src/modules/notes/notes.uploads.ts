/**
 * Note sources that arrive as files (docs/ARCHITECTURE.md, Research notes): a multipart
 * upload of at most 100 MB, a file of the project's working directory copied in, or a chunked upload through the
 * shared transport (`http/uploads.ts`) for files up to their kind's limit. A received file is moved into the note's
 * folder under a fresh name and queued for processing; anything left half-way is removed.
 *
 * Chunked-upload sessions are `note_uploads` rows: at most MAX_UPLOAD_SESSIONS live ones per user (counted under
 * the user's lock), idle ones expire after UPLOAD_IDLE_MS with their bytes (the notes service's sweep).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Multipart } from '@fastify/multipart';
import type { Static } from 'typebox';
import type { ProjectRef } from '../../access/access.ts';
import type { NoteSourceType } from '../../db/types.ts';
import type { Actor } from '../../http/auth.ts';
import { BadRequest, NotFound, PayloadTooLarge, TooManyRequests } from '../../http/errors.ts';
import { receiveChunk, receiveFile } from '../../http/uploads.ts';
import { projectPathRefusal, resolveInside } from '../../lib/paths.ts';
import {
  CHUNK_SIZE,
  defaultTitle,
  DIRECT_UPLOAD_LIMIT,
  fileProblem,
  type FileKind,
  kindOf,
  KIND_LIMITS,
  MAX_UPLOAD_SESSIONS,
  safeFileName,
  UPLOAD_IDLE_MS,
} from './notes.rules.ts';
import type { NotesRepo } from './notes.repo.ts';
import type * as S from './notes.schemas.ts';
import type { NoteStorage } from './notes.storage.ts';
import type { StorageQuota } from '../usage/usage.storage.ts';

/** How long a chunk's write lease lasts before another request may take the chunk over (ms). */
export const CHUNK_LEASE_MS = 2 * 60_000;

type PathBody = Static<typeof S.PathSourceBody>;

/** A new source as the notes service queues it (row and `notes.process` job in one transaction). */
export interface QueuedSource {
  projectId: number;
  noteId: number;
  type: NoteSourceType;
  title?: string | null;
  defaultTitle: string;
  url?: string | null;
  mime?: string | null;
  size?: number | null;
  /** A file already in the note's directory (its name there). */
  fileName?: string;
}

export interface NoteUploadsDeps {
  repo: NotesRepo;
  storage: NoteStorage;
  /** The owner's storage quota and the disk floor (usage.storage.ts): 413 `storage_quota_exceeded`, 507. */
  quota: Pick<StorageQuota, 'reserve'>;
  /** The project and note of a request. @throws 404 `note_not_found`. */
  noteOf(actor: Actor, name: string, noteId: number): Promise<{ project: ProjectRef }>;
  /** Store the source and queue its processing. */
  queueSource(v: QueuedSource): Promise<{ source_id: number; status: 'queued' }>;
}

/** The file intake of the notes area (module header); its methods are the notes service's. */
export function createNoteUploads(deps: NoteUploadsDeps) {
  /** Move a received file into the note's directory under a fresh name; then queue it (removed on failure). */
  async function adoptFile(
    project: ProjectRef,
    noteId: number,
    tmp: string,
    v: { filename: string; kind: FileKind; size: number; mime?: string | null; title?: string | null },
  ) {
    await deps.quota.reserve(project.owner_id, v.size);
    const dir = await deps.storage.noteDir(project.id, noteId);
    await fsp.mkdir(dir, { recursive: true });
    const fileName = `${crypto.randomBytes(6).toString('hex')}-${safeFileName(v.filename)}`;
    const dest = path.join(dir, fileName);
    await fsp.rename(tmp, dest);
    try {
      return await deps.queueSource({
        projectId: project.id,
        noteId,
        type: v.kind,
        title: v.title,
        defaultTitle: defaultTitle({ filename: v.filename }),
        mime: v.mime ?? null,
        size: v.size,
        fileName,
      });
    } catch (err) {
      await fsp.rm(dest, { force: true });
      throw err;
    }
  }

  return {
    /**
     * `POST …/sources` as multipart: the `file` part (streamed to disk, at most its kind's limit and 100 MB) and
     * an optional `title` field. `readParts` is called only after the access check.
     * @throws 400 `file_required` / `unsupported_type` / `empty_file`; 413 `file_too_large`; 404.
     */
    async addFile(actor: Actor, name: string, noteId: number, readParts: () => AsyncIterable<Multipart>) {
      const { project } = await deps.noteOf(actor, name, noteId);
      await deps.quota.reserve(project.owner_id, 0);
      const tmpRoot = await deps.storage.uploads();
      await fsp.mkdir(tmpRoot, { recursive: true });
      const tmp = path.join(tmpRoot, `direct-${crypto.randomBytes(12).toString('hex')}`);
      let title: string | undefined;
      let got: { filename: string; kind: FileKind; size: number; mime: string } | undefined;
      try {
        for await (const part of readParts()) {
          if (part.type === 'field') {
            if (part.fieldname === 'title') title = String(part.value ?? '');
            continue;
          }
          if (part.fieldname !== 'file' || got) {
            part.file.resume();
            continue;
          }
          const filename = String(part.filename ?? '');
          const kind = kindOf(filename);
          if (!kind) {
            part.file.resume();
            const p = fileProblem(filename, 1)!;
            throw new BadRequest(p.code, p.message);
          }
          const limit = Math.min(KIND_LIMITS[kind], DIRECT_UPLOAD_LIMIT);
          const size = await receiveFile(
            part.file,
            tmp,
            limit,
            () => new PayloadTooLarge(tooLargeMessage(kind, limit), 'file_too_large', { limit_bytes: limit }),
          );
          if (size === 0) throw new BadRequest('empty_file', 'The file is empty.');
          got = { filename, kind, size, mime: part.mimetype };
        }
        if (!got) throw new BadRequest('file_required', 'The multipart field `file` is required.');
        return await adoptFile(project, noteId, tmp, { ...got, title });
      } finally {
        await fsp.rm(tmp, { force: true });
      }
    },

    /**
     * `POST …/sources` with `{file_path}`: a file of the project's working directory (inside it, by the paths
     * helper), of an accepted type and size, copied into the note.
     * @throws 403 `path_outside_project`; 404 `file_not_found`; 400 `unsupported_type` / `not_a_file`; 413.
     */
    async addPath(actor: Actor, name: string, noteId: number, body: PathBody) {
      const { project } = await deps.noteOf(actor, name, noteId);
      const p = await resolveInside(project.dir, body.file_path, { create: true, refuse: projectPathRefusal });
      const filename = path.basename(p.rel);
      const st = await fsp.stat(p.real).catch(() => undefined);
      if (!st) throw new NotFound('No such file in the project directory.', 'file_not_found');
      if (!st.isFile()) throw new BadRequest('not_a_file', 'The path names a folder, not a file.');
      const problem = fileProblem(filename, st.size);
      if (problem) {
        if (problem.code === 'file_too_large')
          throw new PayloadTooLarge(problem.message, 'file_too_large', { limit_bytes: problem.limit });
        throw new BadRequest(problem.code, problem.message);
      }
      const tmpRoot = await deps.storage.uploads();
      await fsp.mkdir(tmpRoot, { recursive: true });
      const tmp = path.join(tmpRoot, `copy-${crypto.randomBytes(12).toString('hex')}`);
      try {
        await fsp.copyFile(p.real, tmp, fs.constants.COPYFILE_EXCL);
        return await adoptFile(project, noteId, tmp, {
          filename,
          kind: kindOf(filename)!,
          size: st.size,
          title: body.title,
        });
      } finally {
        await fsp.rm(tmp, { force: true });
      }
    },

    /**
     * `POST …/sources/chunk-init` `{filename, mime, size}`: type and size checked up front; at most 10 live
     * sessions per user. @returns `{upload_id, chunk_size}`.
     * @throws 400 `unsupported_type`; 413 `file_too_large`; 429 `too_many_uploads`; 404.
     */
    async chunkInit(
      actor: Actor,
      name: string,
      noteId: number,
      body: { filename: string; mime: string; size: number },
    ) {
      const { project } = await deps.noteOf(actor, name, noteId);
      await deps.quota.reserve(project.owner_id, 0);
      const problem = fileProblem(body.filename, body.size);
      if (problem) {
        if (problem.code === 'file_too_large')
          throw new PayloadTooLarge(problem.message, 'file_too_large', { limit_bytes: problem.limit });
        throw new BadRequest(problem.code, problem.message);
      }
      const id = crypto.randomBytes(16).toString('hex');
      const file = await deps.storage.uploadFile(id);
      await fsp.mkdir(path.dirname(file), { recursive: true });
      await fsp.writeFile(file, '', { flag: 'wx' });
      try {
        await deps.repo.transaction(async (tx) => {
          await deps.repo.lockUser(tx, actor.id);
          if ((await deps.repo.liveUploads(tx, actor.id, UPLOAD_IDLE_MS)) >= MAX_UPLOAD_SESSIONS)
            throw new TooManyRequests(
              'too_many_uploads',
              `At most ${MAX_UPLOAD_SESSIONS} uploads may be in progress at once; finish or wait for one.`,
              { limit: MAX_UPLOAD_SESSIONS },
            );
          await deps.repo.insertUpload(tx, {
            id,
            noteId,
            projectId: project.id,
            userId: actor.id,
            filename: path.basename(body.filename.replace(/\\/g, '/')).slice(0, 255),
            mime: body.mime,
            type: kindOf(body.filename)!,
            size: body.size,
            chunkSize: CHUNK_SIZE,
          });
        });
      } catch (err) {
        await fsp.rm(file, { force: true });
        throw err;
      }
      return { upload_id: id, chunk_size: CHUNK_SIZE };
    },

    /**
     * `POST …/sources/chunks/:uploadId` with chunk `index` as the raw body (at most `chunk_size` bytes, never
     * past the declared size), written at its offset in the session's file. @returns `{received_bytes}`, or on
     * the last chunk `{done:true, source_id, status:'queued'}` (the session ends, the file joins the note).
     * @throws 404 `upload_not_found` (unknown or expired); 409 `chunk_out_of_order` (not the next index, or being
     *   written by another request); 413 `chunk_too_large`; 400 `empty_chunk`.
     */
    async chunk(
      actor: Actor,
      name: string,
      noteId: number,
      uploadId: string,
      index: number,
      body: Readable,
    ): Promise<{ received_bytes: number } | { done: true; source_id: number; status: 'queued' }> {
      const { project } = await deps.noteOf(actor, name, noteId);
      const session = await deps.repo.upload(noteId, uploadId);
      if (!session || session.user_id !== actor.id) {
        body.resume();
        throw new NotFound('No such upload session (it may have expired).', 'upload_not_found');
      }
      const file = await deps.storage.uploadFile(uploadId);
      const got = await receiveChunk(
        {
          async lease(i) {
            const s = await deps.repo.leaseChunk(uploadId, i, UPLOAD_IDLE_MS, CHUNK_LEASE_MS);
            return (
              s && { sizeBytes: Number(s.size_bytes), receivedBytes: Number(s.received_bytes), chunkSize: s.chunk_size }
            );
          },
          expected: async () => (await deps.repo.upload(noteId, uploadId))?.next_index,
          written: async (i, bytes) => {
            const after = await deps.repo.chunkWritten(uploadId, i, bytes);
            return after && Number(after.received_bytes);
          },
          release: () => deps.repo.releaseChunk(uploadId).then(() => {}),
        },
        index,
        body,
        file,
      );
      if (got.receivedBytes < got.sizeBytes) return { received_bytes: got.receivedBytes };

      // The last chunk: end the session and add the file to the note.
      const gone = await deps.repo.deleteUpload(uploadId);
      if (!gone) throw new NotFound('No such upload session (it may have expired).', 'upload_not_found');
      await fsp.truncate(file, got.sizeBytes);
      try {
        const out = await adoptFile(project, noteId, file, {
          filename: session.filename,
          kind: session.source_type as FileKind,
          size: got.sizeBytes,
          mime: session.mime,
        });
        return { done: true, ...out };
      } finally {
        await fsp.rm(file, { force: true });
      }
    },
  };
}

const tooLargeMessage = (kind: FileKind, limit: number) =>
  `A ${kind} source sent in one request may have at most ${Math.round(limit / (1024 * 1024))} MB; larger files use the chunked upload.`;

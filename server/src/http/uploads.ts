/**
 * The upload transports (docs/ARCHITECTURE.md, "Uploads"), for any area that receives files:
 *
 * - `receiveFile`: a file in one request, streamed to disk with a byte limit (never held in memory);
 * - `receiveChunk`: the chunked upload. A large file arrives as numbered chunks, one request each, strictly in order, so any instance can take the next chunk and a lost request is simply sent again.
 * The area that offers such an upload keeps its sessions (rows: the declared size, the bytes received, the next
 * index, a short write lease) behind `ChunkSessions`; `receiveChunk` writes one chunk:
 *
 *  1. take the chunk's write lease (only the next index, only when no other request holds a fresh lease), so two
 *     requests never write one chunk;
 *  2. stream the request body to the session's file at its offset, refusing more than a chunk or more than the
 *     declared size, in writes of `WRITE_BATCH` bytes (fewer system calls than the socket's 64 KB pieces, memory
 *     bounded by one batch);
 *  3. advance the session (or give the lease back when the chunk failed; the same index may be sent again).
 *
 * The request body is read, never destroyed: on a refusal the rest is drained, so the client receives the answer
 * instead of a reset connection.
 */
import { once } from 'node:events';
import fs from 'node:fs';
import { Transform, type Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { AppError, BadRequest, Conflict, NotFound, PayloadTooLarge } from './errors.ts';

/** Bytes gathered before each file write of a chunk. */
export const WRITE_BATCH = 1024 * 1024;

/** One upload session as its owner stores it. */
export interface ChunkSessions {
  /**
   * Take the write lease of chunk `index`: the session when `index` is the next one and no other request holds a
   * fresh lease; undefined otherwise (or when the session is gone).
   */
  lease(index: number): Promise<{ sizeBytes: number; receivedBytes: number; chunkSize: number } | undefined>;
  /** The index the session expects next; undefined when the session is gone (expired, finished). */
  expected(): Promise<number | undefined>;
  /** Chunk `index` was written (`bytes` long): advance the session, drop the lease. @returns the bytes received. */
  written(index: number, bytes: number): Promise<number | undefined>;
  /** Drop the lease without advancing (the chunk failed). */
  release(): Promise<void>;
}

/**
 * Stream `body` (a multipart file part, or any stream) into a new file `dest`, counting its bytes.
 * @returns the file's size in bytes.
 * @throws `tooLarge()` as soon as more than `limitBytes` arrived (or the multipart parser truncated the part); the
 *   caller removes `dest`.
 */
export async function receiveFile(
  body: Readable & { truncated?: boolean },
  dest: string,
  limitBytes: number,
  tooLarge: () => Error,
): Promise<number> {
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, cb) {
      size += chunk.length;
      if (size > limitBytes) return cb(tooLarge());
      cb(null, chunk);
    },
  });
  await pipeline(body, counter, fs.createWriteStream(dest));
  if (body.truncated) throw tooLarge();
  return size;
}

const sessionGone = () => new NotFound('No such upload session (it may have expired).', 'upload_not_found');

/**
 * Write chunk `index` of a session from `body` into `file` at its offset (the module header's steps).
 * @returns the bytes received so far and the declared size (the upload is complete when they are equal).
 * @throws 404 `upload_not_found` (unknown, expired, or its file swept away); 409 `chunk_out_of_order` (not the next
 *   index, or being written by another request); 413 `chunk_too_large`; 400 `empty_chunk`, `chunk_incomplete` (the
 *   client went away mid-chunk).
 */
export async function receiveChunk(
  sessions: ChunkSessions,
  index: number,
  body: Readable,
  file: string,
): Promise<{ receivedBytes: number; sizeBytes: number }> {
  const leased = await sessions.lease(index);
  if (!leased) {
    body.resume();
    const next = await sessions.expected();
    if (next === undefined) throw sessionGone();
    throw new Conflict('chunk_out_of_order', `Expected chunk ${next}.`, { expected_index: next });
  }
  const room = Math.min(leased.chunkSize, leased.sizeBytes - leased.receivedBytes);
  let bytes = 0;
  try {
    const out = fs.createWriteStream(file, { flags: 'r+', start: leased.receivedBytes, highWaterMark: WRITE_BATCH });
    try {
      let batch: Buffer[] = [];
      let batched = 0;
      // A failed open or write (the session's file swept away, a full disk) ends the loop at the next write.
      const failed = new Promise<never>((_resolve, reject) => out.once('error', reject));
      failed.catch(() => {});
      const write = async (buf: Buffer) => {
        if (out.errored) throw out.errored;
        if (!out.write(buf)) await Promise.race([once(out, 'drain'), failed]);
      };
      for await (const piece of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
        bytes += piece.length;
        if (bytes > room)
          throw new PayloadTooLarge(
            `A chunk may have at most ${leased.chunkSize} bytes and never pass the declared size.`,
            'chunk_too_large',
            { limit_bytes: room },
          );
        batch.push(piece);
        batched += piece.length;
        if (batched < WRITE_BATCH) continue;
        const full = Buffer.concat(batch, batched);
        batch = [];
        batched = 0;
        await write(full);
      }
      if (batched) await write(Buffer.concat(batch, batched));
      out.end();
      await finished(out);
    } catch (err) {
      out.destroy();
      throw err;
    }
    if (bytes === 0) throw new BadRequest('empty_chunk', 'The chunk is empty.');
  } catch (err) {
    body.resume();
    await sessions.release();
    if (err instanceof AppError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw sessionGone();
    // The client went away mid-chunk: nothing advanced, the same index may be sent again.
    if (body.readableAborted || (err as NodeJS.ErrnoException).code === 'ECONNRESET')
      throw new BadRequest('chunk_incomplete', 'The chunk did not arrive whole; send it again.');
    throw err;
  }
  const received = await sessions.written(index, bytes);
  if (received === undefined) throw new Conflict('chunk_out_of_order', 'The chunk was taken over by another request.');
  return { receivedBytes: received, sizeBytes: leased.sizeBytes };
}

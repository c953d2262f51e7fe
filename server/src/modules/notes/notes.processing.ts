/**
 * Processing of note sources (docs/ARCHITECTURE.md, Research notes): the `notes.process` job, like the
 * transcripts pipeline. The job claims the source (`queued → processing`, atomic, so a duplicate delivery does
 * nothing), extracts its text (notes.extract.ts: documents, web pages, YouTube, audio and video through speech,
 * images through the vision model), and ends it `done` with `content_text` — then queues its embedding
 * (`knowledge.index`, document type `note_source`) — or `error` with the reason. Each step is published on the bus
 * (`notes.source`), so the progress stream of any instance follows it.
 *
 * Image descriptions are model calls through the model gateway (purpose `note_source`), billed to the project's
 * owner: reserved before, recorded after, the platform key for trial projects.
 */
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Access, ProjectRef } from '../../access/access.ts';
import { AppError, NotFound } from '../../http/errors.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Bus } from '../../lib/bus.ts';
import type { TextMark } from '../../lib/doc-sources.ts';
import type { Media } from '../../lib/media.ts';
import type { SpeechProvider } from '../../providers/speech/index.ts';
import { ModelError, projectPayer, type ModelGateway } from '../models/model-gateway.ts';
import { ExtractionError, extractFile, extractWeb, extractYoutube } from './notes.extract.ts';
import { youtubeId } from './notes.rules.ts';
import type { NotesRepo } from './notes.repo.ts';
import type { NoteStorage } from './notes.storage.ts';

/** Output tokens of one image description. */
export const VISION_MAX_TOKENS = 1500;

/** Where and how the processing reaches the outside (configuration). */
export interface NoteProcessingOptions {
  /** `OUTBOUND_ALLOW_PRIVATE`: non-public hosts, addresses and ranges that sources may still fetch. */
  allow: readonly string[];
  pageReaderUrl?: string;
  youtubeBaseUrl: string;
  transcriptApiUrl?: string;
  ytDlpPath: string;
}

export interface NoteProcessingDeps {
  repo: NotesRepo;
  access: Pick<Access, 'ownerActor' | 'project'>;
  jobs: JobQueue;
  bus: Pick<Bus, 'publish'>;
  /** The metered model call (image descriptions). */
  models: Pick<ModelGateway, 'complete'>;
  media: Media;
  speech: SpeechProvider;
  storage: NoteStorage;
  options: NoteProcessingOptions;
  log: { error(o: object, m: string): void };
}

const errMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The processing of note sources (module header); built once by the composition root. */
export function createNoteProcessing(deps: NoteProcessingDeps) {
  const { repo, options, storage } = deps;
  const publish = (id: number) => deps.bus.publish('notes.source', { id });

  /** The vision model's description of an image source (metered). @throws ExtractionError. */
  async function describeImage(project: ProjectRef, file: string, mediaType: string): Promise<string> {
    const data = (await fsp.readFile(file)).toString('base64');
    try {
      const answer = await deps.models.complete(projectPayer(project), {
        purpose: 'note_source',
        maxTokens: VISION_MAX_TOKENS,
        temperature: 0,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', media_type: mediaType, data },
              {
                type: 'text',
                text: 'Describe this image for a research note: transcribe all visible text exactly, then describe diagrams, charts, tables and what they show. Plain text, no preamble.',
              },
            ],
          },
        ],
      });
      const text = answer.text.trim();
      if (!text) throw new ExtractionError('The vision model gave no description.');
      return text;
    } catch (err) {
      if (err instanceof ExtractionError) throw err;
      if (err instanceof ModelError)
        throw new ExtractionError(`The vision model failed (${err.kind}); try again later.`);
      // No key, or no budget left: the reason as the service states it.
      if (err instanceof AppError) throw new ExtractionError(err.message);
      throw err;
    }
  }

  return {
    /**
     * The `notes.process` job: claim the source, extract its text, finish it done or error, queue its
     * embedding. Extraction failures end the source (never retried); a database failure throws (retried).
     */
    async processSource(sourceId: number, retry: boolean): Promise<void> {
      const s = await repo.claim(sourceId, retry);
      if (!s) return;
      await publish(s.id);
      const tmpDir = await storage.inside(`uploads/work-${s.id}-${crypto.randomBytes(4).toString('hex')}`);
      await fsp.mkdir(tmpDir, { recursive: true });
      let result:
        | { status: 'done'; text: string; durationSeconds?: number | null; title?: string; marks?: TextMark[] }
        | { status: 'error'; error: string };
      try {
        const { actor, projectName } = await deps.access.ownerActor(s.project_id);
        const project = await deps.access.project(actor, projectName);
        const ex = {
          media: deps.media,
          speech: deps.speech,
          allow: options.allow,
          pageReaderUrl: options.pageReaderUrl,
          youtubeBaseUrl: options.youtubeBaseUrl,
          transcriptApiUrl: options.transcriptApiUrl,
          ytDlpPath: options.ytDlpPath,
          tmpDir,
          describeImage: (file: string, type: string) => describeImage(project, file, type),
          progress: async (message: string) => {
            await repo.progress(s.id, message);
            await publish(s.id);
          },
        };
        if (s.source_type === 'web') {
          const r = await extractWeb(s.url ?? '', ex);
          result = { status: 'done', text: r.text, title: r.title };
        } else if (s.source_type === 'youtube') {
          const id = youtubeId(s.url ?? '');
          if (!id) throw new ExtractionError('The address is not a YouTube video.');
          const r = await extractYoutube(id, ex);
          result = { status: 'done', text: r.text, durationSeconds: r.durationSeconds, marks: r.marks };
        } else {
          if (!s.file_name) throw new ExtractionError('The source has no file.');
          const file = path.join(await storage.noteDir(s.project_id, s.note_id), s.file_name);
          const r = await extractFile(s.source_type, file, ex);
          result = { status: 'done', text: r.text, durationSeconds: r.durationSeconds, marks: r.marks };
        }
      } catch (err) {
        if (err instanceof ExtractionError) result = { status: 'error', error: err.message };
        else if (err instanceof NotFound) result = { status: 'error', error: 'The project no longer exists.' };
        else {
          deps.log.error({ err: errMessage(err), source: s.id }, 'note source processing failed');
          result = { status: 'error', error: 'The source could not be processed (an internal error); try again.' };
        }
      } finally {
        await fsp.rm(tmpDir, { recursive: true, force: true });
      }
      await repo.transaction(async (tx) => {
        const changed = await repo.finish(tx, s.id, result);
        if (changed && result.status === 'done')
          await deps.jobs.send(
            'knowledge.index',
            { project_id: s.project_id, doc_type: 'note_source', doc_id: String(s.id) },
            { tx },
          );
      });
      await publish(s.id);
    },
  };
}

export type NoteProcessing = ReturnType<typeof createNoteProcessing>;

/**
 * Pure rules of meeting transcripts: accepted uploads, the pipeline's states and progress, frame capping and
 * the summary object. No I/O; unit-tested beside (transcripts.rules.unit.test.ts).
 */
import type { TextMark } from '../../lib/doc-sources.ts';

/** Largest upload (Limits → Transcripts: 1 GB); `TRANSCRIPTS_UPLOAD_LIMIT_BYTES` may lower it. */
export const TRANSCRIPT_UPLOAD_LIMIT_BYTES = 1024 * 1024 * 1024;
/** Frames analysed per transcript (Limits → Transcripts: 50 frames). */
export const MAX_FRAMES = 50;
/** Frames extracted at most before capping (bounds disk use of a video with constant scene changes). */
export const MAX_EXTRACTED_FRAMES = 1000;
/** List page size (default 20) and its upper bound. */
export const PAGE_DEFAULT = 20;
export const PAGE_MAX = 100;
/** Scene-change threshold of ffmpeg's `scene` score (0–1). */
export const SCENE_THRESHOLD = 0.3;
/** Text a frame description starts with when its vision call failed. */
export const VISION_FAILED_MARKER = '[vision failed]';
/** Transcript text handed to the summary call at most (characters). */
export const SUMMARY_INPUT_CHARS = 60_000;

/** Accepted extensions and MIME types by kind (Limits → Transcripts). */
export const ACCEPTED: Record<string, { kind: 'audio' | 'video'; mimes: string[] }> = {
  mp3: { kind: 'audio', mimes: ['audio/mpeg', 'audio/mp3'] },
  wav: { kind: 'audio', mimes: ['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave'] },
  m4a: { kind: 'audio', mimes: ['audio/mp4', 'audio/x-m4a', 'audio/m4a'] },
  aac: { kind: 'audio', mimes: ['audio/aac', 'audio/x-aac'] },
  ogg: { kind: 'audio', mimes: ['audio/ogg'] },
  opus: { kind: 'audio', mimes: ['audio/opus', 'audio/ogg'] },
  flac: { kind: 'audio', mimes: ['audio/flac', 'audio/x-flac'] },
  mp4: { kind: 'video', mimes: ['video/mp4'] },
  mov: { kind: 'video', mimes: ['video/quicktime'] },
  webm: { kind: 'video', mimes: ['video/webm', 'audio/webm'] },
  mkv: { kind: 'video', mimes: ['video/x-matroska', 'video/matroska'] },
};

/** Every accepted MIME type. */
export const ACCEPTED_MIMES = new Set(Object.values(ACCEPTED).flatMap((a) => a.mimes));

/** A MIME type without parameters, lower case (`Audio/WAV; x=1` → `audio/wav`). */
export const bareMime = (m: string | undefined): string => (m ?? '').split(';')[0].trim().toLowerCase();

/**
 * The kind and extension of an upload, or why it is refused.
 * @param filename the `filename` field; its extension must be accepted.
 * @param mime the file part's Content-Type; it must be accepted and belong to the same extension.
 */
export function classifyUpload(
  filename: string,
  mime: string,
): { ok: true; kind: 'audio' | 'video'; ext: string } | { ok: false; reason: 'bad_mime' | 'bad_extension' } {
  const m = bareMime(mime);
  if (!ACCEPTED_MIMES.has(m)) return { ok: false, reason: 'bad_mime' };
  const ext = /\.([A-Za-z0-9]{1,5})$/.exec(filename.trim())?.[1]?.toLowerCase();
  const a = ext ? ACCEPTED[ext] : undefined;
  if (!ext || !a) return { ok: false, reason: 'bad_extension' };
  if (!a.mimes.includes(m)) return { ok: false, reason: 'bad_mime' };
  return { ok: true, kind: a.kind, ext };
}

/** The steps whose output is stored, in pipeline order (`finished_step`). */
export type Step = 'audio' | 'transcript' | 'frames' | 'vision' | 'summary' | 'embedding';

/** Every status of the transcript job (docs/ARCHITECTURE.md, Meeting transcripts and voice dictation). */
export const STATUSES = [
  'queued',
  'extracting_audio',
  'transcribing',
  'extracting_frames',
  'frames_extracted',
  'vision_analyzing',
  'vision_analyzed',
  'transcribed',
  'summarizing',
  'summarized',
  'embedding',
  'done',
  'failed',
] as const;
export type Status = (typeof STATUSES)[number];
export const TERMINAL: ReadonlySet<string> = new Set(['done', 'failed']);

/** Status, progress and label while a step runs, and once it has finished. */
export const STEP_STATES: Record<Step, { running: [Status, number, string]; finished: [Status, number, string] }> = {
  audio: {
    running: ['extracting_audio', 5, 'Extracting audio'],
    finished: ['extracting_audio', 15, 'Audio extracted'],
  },
  transcript: { running: ['transcribing', 20, 'Transcribing'], finished: ['transcribed', 50, 'Transcribed'] },
  frames: {
    running: ['extracting_frames', 52, 'Extracting frames'],
    finished: ['frames_extracted', 58, 'Frames extracted'],
  },
  vision: {
    running: ['vision_analyzing', 60, 'Analyzing frames'],
    finished: ['vision_analyzed', 75, 'Frames analyzed'],
  },
  summary: { running: ['summarizing', 80, 'Summarizing'], finished: ['summarized', 90, 'Summarized'] },
  embedding: { running: ['embedding', 92, 'Embedding'], finished: ['done', 100, 'Done'] },
};

/**
 * The next step after `finished` for a transcript of `kind`, or null when the pipeline is complete.
 * Audio: audio → transcript → summary → embedding; video adds frames and vision after the transcript.
 * Embedding is skipped when `embed` is false.
 */
export function nextStep(kind: 'audio' | 'video', finished: Step | null, embed: boolean): Step | null {
  const order: Step[] =
    kind === 'video'
      ? ['audio', 'transcript', 'frames', 'vision', 'summary', 'embedding']
      : ['audio', 'transcript', 'summary', 'embedding'];
  const i = finished ? order.indexOf(finished) : -1;
  const next = order[i + 1] ?? null;
  if (next === 'embedding' && !embed) return null;
  return next;
}

/** The status a transcript rests in after a failed summary: transcribed (audio) or frames_extracted (video). */
export const restingAfterSummaryFailure = (kind: 'audio' | 'video'): Status =>
  kind === 'video' ? 'frames_extracted' : 'transcribed';

/** Vision progress between 60 and 75 % after `done` of `total` frames. */
export const visionProgress = (done: number, total: number): number =>
  total ? 60 + Math.floor((15 * done) / total) : 75;

/**
 * Keep the first MAX_FRAMES frames; the last kept description notes how many were dropped.
 * @returns the kept frames (descriptions may still be null before the vision pass).
 */
export function noteDropped<T extends { description: string | null }>(frames: T[], dropped: number): T[] {
  if (!dropped || !frames.length) return frames;
  const last = frames[frames.length - 1];
  const note = ` (${dropped} more frame${dropped === 1 ? ' was' : 's were'} dropped: at most ${MAX_FRAMES} are analysed)`;
  return [...frames.slice(0, -1), { ...last, description: `${last.description ?? ''}${note}` }];
}

/** Frame timestamps (ms) from ffmpeg's `showinfo` lines, in output order. */
export function showinfoTimes(stderr: string): number[] {
  const out: number[] = [];
  for (const m of stderr.matchAll(/Parsed_showinfo[^\n]*?\bpts_time:\s*(-?[0-9.]+)/g)) {
    const s = Number(m[1]);
    out.push(Number.isFinite(s) ? Math.max(0, Math.round(s * 1000)) : 0);
  }
  return out;
}

/** `mm:ss` (or `h:mm:ss`) of a time in ms. */
export function clock(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** The summary object (docs/ARCHITECTURE.md, Meeting transcripts and voice dictation). */
export interface TranscriptSummary {
  tldr: string;
  key_points: string[];
  action_items: Array<{ task: string; owner: string | null }>;
  decisions: string[];
  topics: string[];
  model: string;
  generated_at: string;
}

const strings = (v: unknown, max = 50): string[] =>
  Array.isArray(v)
    ? v
        .filter((x) => typeof x === 'string' && x.trim())
        .map((x) => (x as string).trim().slice(0, 2000))
        .slice(0, max)
    : [];

/**
 * The summary object from a model's answer: the first JSON object in `text`, its fields coerced to the
 * summary's shape (unknown fields dropped). @returns null when there is no usable object (no `tldr`).
 */
export function parseSummary(text: string, model: string, now: Date): TranscriptSummary | null {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text.slice(start, end + 1));
  } catch {
    return null;
  }
  if (!o || typeof o !== 'object' || typeof o.tldr !== 'string' || !o.tldr.trim()) return null;
  const items = Array.isArray(o.action_items) ? o.action_items : [];
  return {
    tldr: o.tldr.trim().slice(0, 4000),
    key_points: strings(o.key_points),
    action_items: items
      .filter((a): a is Record<string, unknown> => !!a && typeof a === 'object' && typeof a.task === 'string')
      .map((a) => ({
        task: String(a.task).trim().slice(0, 2000),
        owner: typeof a.owner === 'string' && a.owner.trim() ? a.owner.trim().slice(0, 200) : null,
      }))
      .filter((a) => a.task)
      .slice(0, 50),
    decisions: strings(o.decisions),
    topics: strings(o.topics),
    model,
    generated_at: now.toISOString(),
  };
}

/**
 * Marks of speech segments in a transcript's text (each segment found in order after the previous one; a segment
 * not found is skipped), offset by `base` (where the transcript begins in the indexed document).
 */
export function segmentMarks(
  text: string,
  segments: Array<{ start_ms: number; end_ms: number; text: string }>,
  base: number,
): TextMark[] {
  const marks: TextMark[] = [];
  let from = 0;
  for (const g of segments) {
    const needle = g.text.trim();
    if (!needle) continue;
    const at = text.indexOf(needle, from);
    if (at < 0) continue;
    marks.push({ at: base + at, start_ms: g.start_ms, end_ms: g.end_ms });
    from = at + needle.length;
  }
  return marks;
}

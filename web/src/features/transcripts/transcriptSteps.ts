/**
 * Pure logic of meeting transcripts in the web UI: which pipeline steps apply to a recording (audio or video,
 * embedded or not), which one is done, current, failed or still to come for a progress event, and which
 * files may be uploaded. No I/O; tested in transcriptSteps.test.ts.
 */
import {
  ACCEPTED,
  TRANSCRIPT_UPLOAD_LIMIT_BYTES,
} from '../../../../server/src/modules/transcripts/transcripts.rules.ts';
import { msg } from '../../i18n';

/** Accepted extensions and their MIME types, and the largest upload in bytes: the service's own table. */
export { ACCEPTED, TRANSCRIPT_UPLOAD_LIMIT_BYTES };

/** The accepted extensions as a list for people, e.g. "mp3, wav … webm or mkv" (`locale`: a BCP-47 tag). */
export function acceptedList(locale: string): string {
  return new Intl.ListFormat(locale, { type: 'disjunction' }).format(Object.keys(ACCEPTED));
}

/** A byte count as B, KB, MB or GB, one decimal at most, the number formatted by `number`. */
export function sizeText(bytes: number, number: (n: number) => string): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${number(Math.round(v * 10) / 10)} ${units[i]}`;
}

/** The steps shown, in pipeline order (the job's running statuses, plus waiting and the end). */
export type StepId =
  | 'queued'
  | 'extracting_audio'
  | 'transcribing'
  | 'extracting_frames'
  | 'vision_analyzing'
  | 'summarizing'
  | 'embedding'
  | 'done';

export type StepState = 'done' | 'current' | 'pending' | 'failed';

export interface StepView {
  id: StepId;
  /** English label for `t()`. */
  label: string;
  state: StepState;
}

/** A progress event of the job stream, or the same fields of a transcript row. */
export interface ProgressEvent {
  status: string;
  progress_pct: number;
  step_label?: string;
  error: string | null;
}

export const STEP_LABELS: Record<StepId, string> = {
  queued: msg('Waiting in line'),
  extracting_audio: msg('Extracting the audio'),
  transcribing: msg('Transcribing'),
  extracting_frames: msg('Extracting video frames'),
  vision_analyzing: msg('Describing the frames'),
  summarizing: msg('Summarizing'),
  embedding: msg('Adding to the search index'),
  done: msg('Done'),
};

/** Labels of every job status, for the list. */
export const STATUS_LABELS: Record<string, string> = {
  queued: msg('Waiting in line'),
  extracting_audio: msg('Extracting the audio'),
  transcribing: msg('Transcribing'),
  extracting_frames: msg('Extracting video frames'),
  frames_extracted: msg('Frames extracted'),
  vision_analyzing: msg('Describing the frames'),
  vision_analyzed: msg('Frames described'),
  transcribed: msg('Transcribed'),
  summarizing: msg('Summarizing'),
  summarized: msg('Summarized'),
  embedding: msg('Adding to the search index'),
  done: msg('Done'),
  failed: msg('Failed'),
};

/** Progress (%) the server reports once each working step has finished. */
const FINISHED_PCT: Partial<Record<StepId, number>> = {
  extracting_audio: 15,
  transcribing: 50,
  extracting_frames: 58,
  vision_analyzing: 75,
  summarizing: 90,
  embedding: 100,
};

/** A resting status → the step it finished. */
const FINISHED_STATUS: Record<string, StepId> = {
  transcribed: 'transcribing',
  frames_extracted: 'extracting_frames',
  vision_analyzed: 'vision_analyzing',
  summarized: 'summarizing',
};

/**
 * The steps that apply: audio is extracted, transcribed, summarized and embedded; video also has its frames
 * extracted and described after the transcript; embedding is left out when `embed` is false.
 */
export function stepsFor(kind: 'audio' | 'video', embed: boolean): StepId[] {
  return [
    'queued',
    'extracting_audio',
    'transcribing',
    ...(kind === 'video' ? (['extracting_frames', 'vision_analyzing'] as const) : []),
    'summarizing',
    ...(embed ? (['embedding'] as const) : []),
    'done',
  ];
}

/** Whether a status is final (the stream ends). */
export const isTerminal = (status: string): boolean => status === 'done' || status === 'failed';

/**
 * A failed summary does not fail the job: it rests in transcribed (audio) or frames_extracted (video) with
 * the reason in `error`, and the summary may be retried.
 */
export const summaryFailed = (e: ProgressEvent): boolean =>
  (e.status === 'transcribed' || e.status === 'frames_extracted') && !!e.error;

/**
 * The step a failed job stopped in, from the percent it kept: the first step (of `steps`) whose finished
 * percent is above it.
 */
export function failedStep(steps: StepId[], pct: number): StepId {
  return steps.find((s) => FINISHED_PCT[s] !== undefined && FINISHED_PCT[s]! > pct) ?? 'extracting_audio';
}

/**
 * Each step's state for a progress event: steps before the current one are done, later ones pending.
 * A running status is its own step (done once its finished percent is reached, e.g. video "transcribing" at
 * 50 %); a resting status marks its step done and the next one current; `failed` marks the step it stopped
 * in; `done` marks all done. An unknown status leaves every step pending.
 */
export function stepStates(kind: 'audio' | 'video', embed: boolean, e: ProgressEvent): StepView[] {
  const steps = stepsFor(kind, embed);
  let current = -1;
  let state: StepState = 'current';
  if (e.status === 'done') current = steps.length;
  else if (e.status === 'failed') {
    current = steps.indexOf(failedStep(steps, e.progress_pct));
    state = 'failed';
  } else if (summaryFailed(e)) {
    current = steps.indexOf('summarizing');
    state = 'failed';
  } else if (FINISHED_STATUS[e.status]) current = steps.indexOf(FINISHED_STATUS[e.status]) + 1;
  else {
    current = steps.indexOf(e.status as StepId);
    const fin = FINISHED_PCT[e.status as StepId];
    if (current >= 0 && fin !== undefined && e.progress_pct >= fin) current += 1;
  }
  return steps.map((id, i) => ({
    id,
    label: STEP_LABELS[id],
    state:
      current < 0 ? 'pending' : i < current ? 'done' : i === current ? (id === 'done' ? 'done' : state) : 'pending',
  }));
}

/** The `accept` attribute of the file input: every extension and MIME type. */
export const ACCEPT_ATTR = Object.entries(ACCEPTED)
  .flatMap(([ext, a]) => [`.${ext}`, ...a.mimes])
  .filter((v, i, all) => all.indexOf(v) === i)
  .join(',');

/**
 * The MIME type to send for a file: the browser's type when the server accepts it for the name's extension,
 * else the extension's usual type (browsers report some, e.g. `.mkv` or `.opus`, as empty or differently).
 * @returns null when the extension is not accepted.
 */
export function uploadMime(filename: string, browserType: string): string | null {
  const ext = /\.([A-Za-z0-9]{1,5})$/.exec(filename.trim())?.[1]?.toLowerCase();
  const a = ext ? ACCEPTED[ext] : undefined;
  if (!a) return null;
  const bare = browserType.split(';')[0].trim().toLowerCase();
  return a.mimes.includes(bare) ? bare : a.mimes[0];
}

/** `mm:ss` (or `h:mm:ss`) of a time in ms. */
export function clock(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

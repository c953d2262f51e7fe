/**
 * Text of a note source, by kind (docs/ARCHITECTURE.md, Research notes), with maintained libraries:
 * PDF text layer (unpdf, a packaging of pdf.js; with each page's place), DOCX (mammoth, headings kept), web pages (Mozilla Readability over
 * linkedom), audio and video (ffmpeg to 16 kHz mono, then the speech server), images (the vision model, given
 * by the caller), TXT and Markdown as they are. YouTube: English captions, then captions in any language,
 * then a transcript API (`YOUTUBE_TRANSCRIPT_API_URL`), then the audio through yt-dlp and the speech server;
 * each step's failure reason is kept for the source's `error`. The parsing libraries are imported at first use:
 * loaded at start they cost ~0.6 s and ~80 MiB of every start (bench/startup.ts).
 *
 * Every failure a user should read is an `ExtractionError` whose message says why in one sentence (never a
 * path, a key or a stack).
 */
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { MediaError, MediaToolMissing, type Media } from '../../lib/media.ts';
import { FetchFailed, FetchRefused, resolveOutbound, safeFetch } from '../../lib/safe-fetch.ts';
import { checkZipExpansion, ZipTooLarge } from '../../lib/zip-guard.ts';
import {
  SpeechError,
  SpeechUnavailable,
  type SpeechProvider,
  type Transcription,
} from '../../providers/speech/index.ts';
import type { TextMark } from '../../lib/doc-sources.ts';
import { DOCX_INFLATED_LIMIT, type FileKind, MB } from './notes.rules.ts';

/** A reason the source could not be processed, for its `error` field. */
export class ExtractionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExtractionError';
  }
}

/** Limits of outbound fetches for sources. */
export const PAGE_MAX_BYTES = 10 * 1024 * 1024;
export const FETCH_TIMEOUT_MS = 20_000;
/** Time limit of a yt-dlp audio download (ms) and the largest audio it may fetch. */
export const YTDLP_TIMEOUT_MS = 10 * 60_000;
export const YTDLP_MAX_FILESIZE = '500M';

export interface ExtractDeps {
  media: Media;
  speech: SpeechProvider;
  /** Outbound exceptions to the public-address rule (`OUTBOUND_ALLOW_PRIVATE`). */
  allow: readonly string[];
  /** `PAGE_READER_URL`: `GET {base}/{url}` answers the page as text. */
  pageReaderUrl?: string;
  /** Where YouTube watch pages are read (`YOUTUBE_BASE_URL`, default https://www.youtube.com). */
  youtubeBaseUrl: string;
  /** `YOUTUBE_TRANSCRIPT_API_URL`: `GET {base}?video_id=<id>` answers `{text}` or a list of `{text}` segments. */
  transcriptApiUrl?: string;
  /** The yt-dlp binary (`YTDLP_PATH`, default `yt-dlp` on the PATH). */
  ytDlpPath: string;
  /** A scratch directory of this source (removed by the caller). */
  tmpDir: string;
  /** Describe an image with the vision model. @throws ExtractionError. */
  describeImage(file: string, mediaType: string): Promise<string>;
  /** Report a step (shown on the progress stream). */
  progress(message: string): Promise<void>;
}

export interface Extracted {
  text: string;
  durationSeconds?: number | null;
  /** Page or speech-segment positions in `text` (docs/ARCHITECTURE.md, Citations and locations), sorted by `at`. */
  marks?: TextMark[];
}

/**
 * Text of timed pieces (speech segments, caption lines), one piece per line, with a mark per piece
 * (`start_ms`–`end_ms`). Empty pieces are left out.
 */
export function timedText(pieces: Array<{ start_ms: number; end_ms: number; text: string }>): {
  text: string;
  marks: TextMark[];
} {
  let text = '';
  const marks: TextMark[] = [];
  for (const p of pieces) {
    const line = p.text.replace(/\s+/g, ' ').trim();
    if (!line) continue;
    if (text) text += '\n';
    marks.push({
      at: text.length,
      start_ms: Math.max(0, Math.round(p.start_ms)),
      end_ms: Math.max(0, Math.round(p.end_ms)),
    });
    text += line;
  }
  return { text, marks };
}

/** A transcription's text: one line per timed segment with its marks when the server gave segments. */
export function transcriptionText(t: Transcription): { text: string; marks?: TextMark[] } {
  const segs = (t.segments ?? []).filter((s) => Number.isFinite(s.start) && Number.isFinite(s.end));
  if (segs.length) {
    const r = timedText(segs.map((s) => ({ start_ms: s.start * 1000, end_ms: s.end * 1000, text: s.text })));
    if (r.text) return r;
  }
  return { text: t.text.trim() };
}

/** Speech failures as reasons. */
function speechReason(err: unknown): ExtractionError {
  if (err instanceof SpeechUnavailable)
    return new ExtractionError('No speech server is configured (SPEECH_URL), so audio cannot be transcribed.');
  if (err instanceof SpeechError)
    return new ExtractionError(
      `The speech server failed${err.status ? ` (HTTP ${err.status})` : ' (not reachable)'}; try again later.`,
    );
  if (err instanceof MediaToolMissing)
    return new ExtractionError('ffmpeg is not installed on the server, so audio and video cannot be converted.');
  if (err instanceof MediaError) return new ExtractionError('The file could not be decoded as audio or video.');
  return err instanceof ExtractionError ? err : new ExtractionError('The audio could not be transcribed.');
}

/** Audio or video file → text through ffmpeg (16 kHz mono WAV) and the speech server. */
async function transcribeMedia(file: string, deps: ExtractDeps): Promise<Extracted> {
  if (!deps.speech.available) throw speechReason(new SpeechUnavailable());
  try {
    await deps.progress('Reading the media file');
    const info = await deps.media.probe(file);
    if (!info.hasAudio) throw new ExtractionError('The file has no audio track to transcribe.');
    await deps.progress('Converting the audio to 16 kHz mono');
    const wav = path.join(deps.tmpDir, 'speech.wav');
    await deps.media.toSpeechWav(file, wav);
    await deps.progress('Transcribing');
    const t = await deps.speech.transcribe({ file: wav, filename: 'speech.wav' });
    const { text, marks } = transcriptionText(t);
    if (!text) throw new ExtractionError('The speech server heard no words in the audio.');
    const duration = info.durationSeconds ?? t.duration ?? null;
    return { text, marks, durationSeconds: duration === null ? null : Math.round(duration) };
  } catch (err) {
    throw speechReason(err);
  }
}

/** Text of a PDF's text layer, pages joined by blank lines, with a mark where each page (1-based) begins. */
export async function pdfPages(data: Uint8Array): Promise<{ text: string; marks: TextMark[] }> {
  const { extractText, getDocumentProxy } = await import('unpdf');
  const doc = await getDocumentProxy(data);
  try {
    const { text: pages } = await extractText(doc, { mergePages: false });
    let text = '';
    const marks: TextMark[] = [];
    (pages as string[]).forEach((p, i) => {
      const page = p.trim();
      if (!page) return;
      if (text) text += '\n\n';
      marks.push({ at: text.length, page: i + 1 });
      text += page;
    });
    return { text, marks };
  } finally {
    await doc.destroy().catch(() => {});
  }
}

/** Text of a PDF's text layer, pages joined by blank lines. */
export async function pdfText(data: Uint8Array): Promise<string> {
  return (await pdfPages(data)).text;
}

/**
 * A DOCX document's text with its headings kept as Markdown headings (`#`…`######`, so passages know their
 * section), list items as `- ` lines and table rows as `a | b` lines; blocks separated by blank lines.
 */
export async function docxText(file: string): Promise<string> {
  const [{ default: mammoth }, { parseHTML }] = await Promise.all([import('mammoth'), import('linkedom')]);
  const html = (await mammoth.convertToHtml({ path: file })).value;
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  const tidy = (t: string | null | undefined) => (t ?? '').replace(/\s+/g, ' ').trim();
  const out: string[] = [];
  for (const el of Array.from(document.body.children) as Element[]) {
    const tag = el.tagName.toLowerCase();
    const h = /^h([1-6])$/.exec(tag);
    if (h) {
      const t = tidy(el.textContent);
      if (t) out.push(`${'#'.repeat(Number(h[1]))} ${t}`);
    } else if (tag === 'ul' || tag === 'ol') {
      const items = (Array.from(el.querySelectorAll('li')) as Element[])
        .map((li) => tidy(li.textContent))
        .filter(Boolean);
      if (items.length) out.push(items.map((i) => `- ${i}`).join('\n'));
    } else if (tag === 'table') {
      const rows = (Array.from(el.querySelectorAll('tr')) as Element[])
        .map((tr) =>
          (Array.from(tr.querySelectorAll('td, th')) as Element[]).map((c) => tidy(c.textContent)).join(' | '),
        )
        .filter((r) => r.replace(/[|\s]/g, ''));
      if (rows.length) out.push(rows.join('\n'));
    } else {
      const t = tidy(el.textContent);
      if (t) out.push(t);
    }
  }
  return out.join('\n\n');
}

/** The text of a file source of `kind`. @throws ExtractionError with the reason. */
export async function extractFile(kind: FileKind, file: string, deps: ExtractDeps): Promise<Extracted> {
  switch (kind) {
    case 'txt':
    case 'markdown': {
      await deps.progress('Reading the text');
      const text = (await fsp.readFile(file, 'utf8')).replace(/^\uFEFF/, '');
      if (!text.trim()) throw new ExtractionError('The file holds no text.');
      return { text };
    }
    case 'pdf': {
      await deps.progress('Reading the PDF text layer');
      let pdf: { text: string; marks: TextMark[] };
      try {
        pdf = await pdfPages(new Uint8Array(await fsp.readFile(file)));
      } catch {
        throw new ExtractionError('The file could not be read as a PDF.');
      }
      if (!pdf.text.trim()) throw new ExtractionError('The PDF has no text layer (a scanned document?).');
      return pdf;
    }
    case 'docx': {
      await deps.progress('Reading the document');
      let text: string;
      try {
        await checkZipExpansion(file, { maxBytes: DOCX_INFLATED_LIMIT });
        text = await docxText(file);
      } catch (err) {
        if (err instanceof ZipTooLarge)
          throw new ExtractionError(
            `The document expands to more than ${DOCX_INFLATED_LIMIT / MB} MB when unpacked, so it is not read.`,
          );
        throw new ExtractionError('The file could not be read as a DOCX document.');
      }
      if (!text.trim()) throw new ExtractionError('The document holds no text.');
      return { text: text.trim() };
    }
    case 'image': {
      await deps.progress('Describing the image');
      const ext = path.extname(file).slice(1).toLowerCase();
      const type = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' }[
        ext
      ];
      if (!type) throw new ExtractionError('The image type is not supported.');
      return { text: await deps.describeImage(file, type) };
    }
    case 'audio':
    case 'video':
      return transcribeMedia(file, deps);
  }
}

/** Outbound-fetch failures as reasons. */
function fetchReason(err: unknown, what: string): ExtractionError {
  if (err instanceof FetchRefused) return new ExtractionError(`${what} refused: ${err.message}`);
  if (err instanceof FetchFailed) return new ExtractionError(`${what} failed: ${err.message}`);
  return new ExtractionError(`${what} failed.`);
}

/** Decode a body by the charset its content type names (UTF-8 otherwise). */
function decode(body: Buffer, contentType: string): string {
  const cs = /charset=([\w-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(cs ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** The main text of an HTML page (Readability), else its body text; whitespace tidied. */
export async function htmlMainText(html: string): Promise<{ title: string; text: string }> {
  const [{ parseHTML }, { Readability }] = await Promise.all([import('linkedom'), import('@mozilla/readability')]);
  const { document } = parseHTML(html);
  const title = (document.querySelector('title')?.textContent ?? '').trim();
  let text: string;
  try {
    const article = new Readability(document as unknown as Document, { charThreshold: 100 }).parse();
    text = article?.textContent ?? '';
  } catch {
    text = '';
  }
  if (!text.trim()) {
    const { document: again } = parseHTML(html);
    for (const el of again.querySelectorAll('script, style, noscript')) el.remove();
    text = again.body?.textContent ?? '';
  }
  const tidy = text
    .split('\n')
    .map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title, text: tidy };
}

/**
 * A web page's main text: through the page reader when configured, else fetched here (SSRF rules) and read. The
 * page reader fetches the page itself, so the page's URL passes the same outbound rules first (http or https, a
 * host resolving to public addresses only, unless `OUTBOUND_ALLOW_PRIVATE` names it): a reader inside the
 * operator's network never becomes a way into it.
 * @throws ExtractionError with the reason.
 */
export async function extractWeb(url: string, deps: ExtractDeps): Promise<Extracted & { title?: string }> {
  if (deps.pageReaderUrl) {
    await deps.progress('Reading the page through the page reader');
    try {
      await resolveOutbound(url, deps.allow);
    } catch (err) {
      throw fetchReason(err, 'Fetching the page');
    }
    let res;
    try {
      // The page reader is a provider the operator configured; the user's URL is its path.
      res = await safeFetch(`${deps.pageReaderUrl}/${url}`, {
        allow: [...deps.allow, new URL(deps.pageReaderUrl).hostname],
        maxBytes: PAGE_MAX_BYTES,
        timeoutMs: FETCH_TIMEOUT_MS * 3,
      });
    } catch (err) {
      throw fetchReason(err, 'The page reader');
    }
    const text = decode(res.body, res.contentType).trim();
    if (!text) throw new ExtractionError('The page reader returned no text.');
    return { text };
  }
  await deps.progress('Fetching the page');
  let res;
  try {
    res = await safeFetch(url, { allow: deps.allow, maxBytes: PAGE_MAX_BYTES, timeoutMs: FETCH_TIMEOUT_MS });
  } catch (err) {
    throw fetchReason(err, 'Fetching the page');
  }
  const ct = res.contentType.toLowerCase();
  const body = decode(res.body, res.contentType);
  if (ct.startsWith('text/plain') || ct.startsWith('text/markdown')) {
    if (!body.trim()) throw new ExtractionError('The page holds no text.');
    return { text: body.trim() };
  }
  if (ct && !ct.includes('html') && !ct.includes('xml'))
    throw new ExtractionError(`The address is not a web page (${ct.split(';')[0]}).`);
  await deps.progress('Extracting the main text');
  const { title, text } = await htmlMainText(body);
  if (!text) throw new ExtractionError('The page holds no readable text.');
  return { text, title: title || undefined };
}

/** Decode the entities of caption XML text. */
const decodeEntities = (s: string) =>
  s
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n) => String.fromCodePoint(parseInt(n, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/**
 * Lines of a timed-text (caption) XML document, with their times when the lines carry them (`<text start="s"
 * dur="s">` or `<p t="ms" d="ms">`): then one mark per line.
 */
export function captionLines(xml: string): { text: string; marks?: TextMark[] } {
  const lines: Array<{ start_ms: number; end_ms: number; text: string }> = [];
  let timed = true;
  for (const m of xml.matchAll(/<(text|p)\b([^>]*)>([\s\S]*?)<\/(?:text|p)>/g)) {
    // Timed text escapes twice (`&amp;#39;`): decode the XML, then the HTML inside it.
    const line = decodeEntities(decodeEntities(m[3]).replace(/<[^>]+>/g, ''))
      .replace(/\s+/g, ' ')
      .trim();
    if (!line) continue;
    const attr = (n: string) => {
      const v = new RegExp(`\\b${n}="([0-9.]+)"`).exec(m[2])?.[1];
      return v === undefined ? undefined : Number(v);
    };
    const [start, dur] = m[1] === 'text' ? [attr('start'), attr('dur')] : [attr('t'), attr('d')];
    const scale = m[1] === 'text' ? 1000 : 1;
    if (start === undefined || !Number.isFinite(start)) timed = false;
    const s0 = (start ?? 0) * scale;
    lines.push({
      start_ms: s0,
      end_ms: s0 + (dur !== undefined && Number.isFinite(dur) ? dur * scale : 0),
      text: line,
    });
  }
  if (timed && lines.length) return timedText(lines);
  return { text: lines.map((l) => l.text).join('\n') };
}

/** Lines of a timed-text (caption) XML document. */
export function captionText(xml: string): string {
  return captionLines(xml).text;
}

interface CaptionTrack {
  baseUrl: string;
  languageCode: string;
  kind?: string;
}

/** The caption tracks a watch page lists (its player response), or []. */
export function captionTracks(html: string): CaptionTrack[] {
  const i = html.indexOf('"captionTracks":');
  if (i < 0) return [];
  const start = html.indexOf('[', i);
  let depth = 0;
  for (let j = start; j < html.length && j < start + 200_000; j++) {
    const c = html[j];
    if (c === '[') depth++;
    else if (c === ']' && --depth === 0) {
      try {
        const arr = JSON.parse(html.slice(start, j + 1)) as CaptionTrack[];
        return arr.filter((t) => typeof t?.baseUrl === 'string' && typeof t?.languageCode === 'string');
      } catch {
        return [];
      }
    }
  }
  return [];
}

/** yt-dlp, without a shell, time-limited. @throws ExtractionError with the reason. */
function runYtDlp(bin: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: YTDLP_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 }, (err, _o, stderr) => {
      if (!err) return resolve();
      const e = err as NodeJS.ErrnoException & { killed?: boolean };
      if (e.code === 'ENOENT') return reject(new ExtractionError('yt-dlp is not installed on the server'));
      if (e.killed) return reject(new ExtractionError('the audio download took too long'));
      const line = String(stderr)
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l.startsWith('ERROR'))
        .pop();
      reject(new ExtractionError(line ? line.replace(/^ERROR:\s*/, '').slice(0, 200) : 'the audio download failed'));
    });
  });
}

/**
 * A YouTube video's transcript through the cascade (module comment).
 * @throws ExtractionError listing each step's reason.
 */
export async function extractYoutube(videoId: string, deps: ExtractDeps): Promise<Extracted> {
  const reasons: string[] = [];
  const fetchOpts = { allow: deps.allow, maxBytes: PAGE_MAX_BYTES, timeoutMs: FETCH_TIMEOUT_MS };
  const watchUrl = `${deps.youtubeBaseUrl}/watch?v=${videoId}`;

  // 1–2. Captions: English first, then any language.
  await deps.progress('Looking for captions');
  let tracks: CaptionTrack[] = [];
  try {
    const page = await safeFetch(watchUrl, { ...fetchOpts, headers: { 'accept-language': 'en-US,en;q=0.9' } });
    tracks = captionTracks(decode(page.body, page.contentType));
    if (!tracks.length) reasons.push('captions: the video has none');
  } catch (err) {
    reasons.push(`captions: ${fetchReason(err, 'the video page').message}`);
  }
  const english = tracks.filter((t) => t.languageCode.toLowerCase().startsWith('en'));
  const ordered = [
    ...english.filter((t) => t.kind !== 'asr'),
    ...english.filter((t) => t.kind === 'asr'),
    ...tracks.filter((t) => !t.languageCode.toLowerCase().startsWith('en')),
  ];
  for (const t of ordered.slice(0, 3)) {
    try {
      const r = await safeFetch(new URL(t.baseUrl, watchUrl).toString(), fetchOpts);
      const captions = captionLines(decode(r.body, r.contentType));
      if (captions.text) return captions;
      reasons.push(`captions (${t.languageCode}): empty`);
    } catch (err) {
      reasons.push(`captions (${t.languageCode}): ${fetchReason(err, 'download').message}`);
    }
  }

  // 3. The transcript API.
  if (deps.transcriptApiUrl) {
    await deps.progress('Asking the transcript service');
    try {
      const u = new URL(deps.transcriptApiUrl);
      u.searchParams.set('video_id', videoId);
      const r = await safeFetch(u.toString(), {
        ...fetchOpts,
        allow: [...deps.allow, u.hostname],
        headers: { accept: 'application/json' },
      });
      const body = JSON.parse(r.body.toString('utf8')) as unknown;
      const segs = Array.isArray(body)
        ? body
        : ((body as { segments?: unknown[] })?.segments ?? [{ text: (body as { text?: unknown })?.text }]);
      const list = (segs as Array<{ text?: unknown; start?: unknown; duration?: unknown }>).filter(
        (s) => typeof s?.text === 'string' && s.text.trim(),
      );
      // Segments with times (`start`, `duration` in seconds) give timecodes.
      if (list.length && list.every((s) => typeof s.start === 'number' && Number.isFinite(s.start))) {
        const timed = timedText(
          list.map((s) => {
            const start = (s.start as number) * 1000;
            const dur = typeof s.duration === 'number' && Number.isFinite(s.duration) ? s.duration * 1000 : 0;
            return { start_ms: start, end_ms: start + dur, text: s.text as string };
          }),
        );
        if (timed.text) return timed;
      }
      const text = list.map((s) => (s.text as string).trim()).join('\n');
      if (text) return { text };
      reasons.push('transcript service: no transcript');
    } catch (err) {
      reasons.push(
        err instanceof SyntaxError
          ? 'transcript service: not JSON'
          : `transcript service: ${fetchReason(err, 'request').message}`,
      );
    }
  } else reasons.push('transcript service: not configured (YOUTUBE_TRANSCRIPT_API_URL)');

  // 4. The audio, downloaded with yt-dlp, through the speech server.
  if (!deps.speech.available) reasons.push('audio: no speech server is configured (SPEECH_URL)');
  else {
    await deps.progress('Downloading the audio');
    try {
      const out = path.join(deps.tmpDir, 'yt');
      await fsp.mkdir(out, { recursive: true });
      await runYtDlp(deps.ytDlpPath, [
        '--no-playlist',
        '--no-progress',
        '--quiet',
        '-f',
        'bestaudio/best',
        '--max-filesize',
        YTDLP_MAX_FILESIZE,
        '--socket-timeout',
        '20',
        '-o',
        path.join(out, 'audio.%(ext)s'),
        '--',
        videoId,
      ]);
      const file = (await fsp.readdir(out)).find((f) => f.startsWith('audio.'));
      if (!file) throw new ExtractionError('the audio download produced no file');
      return await transcribeMedia(path.join(out, file), deps);
    } catch (err) {
      reasons.push(`audio: ${err instanceof ExtractionError ? err.message : 'the download failed'}`);
    }
  }
  throw new ExtractionError(`No transcript could be made. ${reasons.join('; ')}.`);
}

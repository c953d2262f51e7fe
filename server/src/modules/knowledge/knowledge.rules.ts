/**
 * Markdown chunking for the semantic index (issue 5): split along headings, then split long sections into
 * windows with overlap. Each chunk keeps its heading path as `title` (e.g. "Wiki › Setup › Database") and its
 * place in the document as `location` (docs/ARCHITECTURE.md, Citations and locations): the heading path inside the
 * document, and either the 1-based line range of the text or, when the owner gives page or speech-segment marks,
 * the page range or the timecodes.
 */
import type { PassageLocation, TextMark } from '../../lib/doc-sources.ts';

export interface Chunk {
  /** 0-based position in the document. */
  chunk_ix: number;
  /** Document title and heading path. */
  title: string;
  text: string;
  /** Where the chunk is in the document. */
  location: PassageLocation;
}

export interface ChunkOptions {
  /** Target maximum characters of a chunk's text (default 1200). */
  maxChars?: number;
  /** Characters repeated from the end of the previous window of the same section (default 200). */
  overlap?: number;
  /**
   * At most this many chunks per document (default 2000); the rest of a very long document is not indexed, and
   * `chunkText` says how far the chunks reach (`indexedChars`).
   */
  maxChunks?: number;
  /** Page or speech-segment marks of the text (character offsets into `text` as given), sorted by `at`. */
  marks?: TextMark[];
}

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;

interface Line {
  text: string;
  /** Offset of the line in the normalised text. */
  at: number;
}

interface Section {
  path: string[];
  lines: Line[];
}

function sections(text: string): Section[] {
  const out: Section[] = [];
  const stack: string[] = [];
  let cur: Section = { path: [], lines: [] };
  let fence = false;
  let at = 0;
  for (const line of text.split('\n')) {
    const here = at;
    at += line.length + 1;
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const m = fence ? null : HEADING.exec(line);
    if (m) {
      if (cur.lines.some((l) => l.text.trim())) out.push(cur);
      const level = m[1].length;
      stack.length = Math.min(stack.length, level - 1);
      while (stack.length < level - 1) stack.push('');
      stack.push(m[2].trim());
      cur = { path: stack.filter(Boolean), lines: [] };
    } else cur.lines.push({ text: line, at: here });
  }
  if (cur.lines.some((l) => l.text.trim())) out.push(cur);
  return out;
}

/**
 * A section's body: its lines joined, runs of blank lines collapsed to one, trimmed; with the map from a body
 * offset back to an offset of the normalised text.
 */
function sectionBody(lines: Line[]): { body: string; toText(offset: number): number } {
  const kept: Array<Line & { bodyAt: number }> = [];
  let len = 0;
  for (const l of lines) {
    if (l.text === '' && kept.length && kept[kept.length - 1].text === '') continue;
    kept.push({ ...l, bodyAt: len });
    len += l.text.length + 1;
  }
  const joined = kept.map((l) => l.text).join('\n');
  const lead = joined.length - joined.trimStart().length;
  const body = joined.trim();
  return {
    body,
    toText(offset: number) {
      const o = offset + lead;
      let lo = 0;
      let hi = kept.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (kept[mid].bodyAt <= o) lo = mid;
        else hi = mid - 1;
      }
      const l = kept[lo];
      return l ? l.at + Math.min(o - l.bodyAt, l.text.length) : 0;
    },
  };
}

/**
 * Split a long text into windows of at most `max` characters, cut at paragraph, line or sentence ends, with
 * `overlap`. @returns each window's trimmed text and its offsets `[start, end)` in `text`.
 */
function windows(text: string, max: number, overlap: number): Array<{ text: string; start: number; end: number }> {
  const piece = (from: number, to: number) => {
    const raw = text.slice(from, to);
    const t = raw.trim();
    const start = from + (raw.length - raw.trimStart().length);
    return { text: t, start, end: start + t.length };
  };
  if (text.length <= max) return [piece(0, text.length)].filter((w) => w.text);
  const out: Array<{ text: string; start: number; end: number }> = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + max);
    if (end < text.length) {
      const slice = text.slice(start, end);
      const cut = Math.max(slice.lastIndexOf('\n\n'), slice.lastIndexOf('\n'), slice.lastIndexOf('. '));
      if (cut > max * 0.5) end = start + cut + 1;
    }
    out.push(piece(start, end));
    if (end >= text.length) break;
    let next = Math.max(end - overlap, start + 1);
    const space = text.indexOf(' ', next);
    if (space > 0 && space < end) next = space + 1;
    start = next;
  }
  return out.filter((w) => w.text);
}

/** The last mark at or before `offset`, or undefined. */
function markAt(marks: TextMark[], offset: number): TextMark | undefined {
  let lo = 0;
  let hi = marks.length - 1;
  let found: TextMark | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (marks[mid].at <= offset) {
      found = marks[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * The location of the text between offsets `start` and `end` (exclusive) of a document: pages or timecodes from
 * `marks` when they give any, else 1-based lines (`lineStarts`: the offset where each line begins); with an issue's
 * activity marks, also the first and last activity entry the text covers.
 */
export function locate(
  start: number,
  end: number,
  marks: TextMark[] | undefined,
  lineStarts: number[],
  heading?: string,
): PassageLocation {
  const loc: PassageLocation = {};
  if (heading) loc.heading = heading;
  const last = Math.max(start, end - 1);
  if (marks?.length) {
    const a = markAt(marks, start);
    const b = markAt(marks, last) ?? a;
    if (a?.page !== undefined) {
      loc.page = a.page;
      if (b?.page !== undefined && b.page > a.page) loc.page_end = b.page;
    }
    if (a?.start_ms !== undefined) {
      loc.start_ms = a.start_ms;
      const e = b?.end_ms ?? b?.start_ms ?? a.end_ms;
      if (e !== undefined) loc.end_ms = e;
    }
    // Activity entries: the text may begin before the first entry (the description).
    const first = a ?? (marks[0].at <= last ? marks[0] : undefined);
    if (first?.activity_id !== undefined) {
      loc.activity_id = first.activity_id;
      if (b?.activity_id !== undefined && b.activity_id !== first.activity_id) loc.activity_id_end = b.activity_id;
    }
    // Page and speech marks stand for the lines; activity marks come with them.
    if (first?.activity_id === undefined && marks[0].activity_id === undefined) return loc;
  }
  const lineOf = (o: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= o) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  loc.line_start = lineOf(start);
  loc.line_end = lineOf(last);
  return loc;
}

/**
 * Chunk a document and say how much of it the chunks cover.
 * @param title the document's title (prefix of every chunk title).
 * @param text Markdown or plain text.
 * @returns chunks in order with `chunk_ix` 0..n-1, and `indexedChars`: the characters of `text` up to the end of
 * the last chunk when `maxChunks` cut the document, else `text.length`.
 */
export function chunkText(
  title: string,
  text: string,
  opts: ChunkOptions = {},
): { chunks: Chunk[]; indexedChars: number } {
  const max = opts.maxChars ?? 1200;
  const overlap = opts.overlap ?? 200;
  const limit = opts.maxChunks ?? 2000;
  // Line ends normalised; `removed` keeps where a "\r" of a "\r\n" was dropped, to map offsets back to `text`.
  const removed: number[] = [];
  let norm = '';
  let from = 0;
  for (let i = text.indexOf('\r'); i >= 0; i = text.indexOf('\r', i + 1)) {
    norm += text.slice(from, i);
    if (text[i + 1] === '\n') removed.push(norm.length);
    else norm += '\n';
    from = i + 1;
  }
  norm += text.slice(from);
  const toOriginal = (o: number) => {
    let lo = 0;
    let hi = removed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (removed[mid] <= o) lo = mid + 1;
      else hi = mid;
    }
    return o + lo;
  };
  const lineStarts = [0];
  for (let i = norm.indexOf('\n'); i >= 0; i = norm.indexOf('\n', i + 1)) lineStarts.push(toOriginal(i + 1));
  let lastEnd = 0;

  const out: Chunk[] = [];
  const secs = sections(norm);
  if (!secs.length && title.trim()) secs.push({ path: [], lines: [{ text: title, at: -1 }] });
  for (const s of secs) {
    const { body, toText } = sectionBody(s.lines);
    const path = s.path[0] && s.path[0].toLowerCase() === title.trim().toLowerCase() ? s.path.slice(1) : s.path;
    const heading = [title, ...path].filter(Boolean).join(' › ');
    for (const w of windows(body, max, overlap)) {
      if (out.length >= limit) return { chunks: out, indexedChars: lastEnd };
      if (s.lines[0]?.at === -1) {
        out.push({ chunk_ix: out.length, title: heading, text: w.text, location: {} });
        continue;
      }
      const start = toText(w.start);
      const end = toText(Math.max(w.start, w.end - 1)) + 1;
      lastEnd = toOriginal(end);
      out.push({
        chunk_ix: out.length,
        title: heading,
        text: w.text,
        location: locate(toOriginal(start), lastEnd, opts.marks, lineStarts, path.join(' › ')),
      });
    }
  }
  return { chunks: out, indexedChars: text.length };
}

/**
 * Chunk a document (`chunkText` without the coverage).
 * @returns chunks in order with `chunk_ix` 0..n-1.
 */
export function chunkDocument(title: string, text: string, opts: ChunkOptions = {}): Chunk[] {
  return chunkText(title, text, opts).chunks;
}

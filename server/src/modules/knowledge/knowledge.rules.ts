/**
 * Markdown chunking for the semantic index (issue 5): split along headings, then split long sections into
 * windows with overlap. Each chunk keeps its heading path as `title` (e.g. "Wiki › Setup › Database").
 */

export interface Chunk {
  /** 0-based position in the document. */
  chunk_ix: number;
  /** Document title and heading path. */
  title: string;
  text: string;
}

export interface ChunkOptions {
  /** Target maximum characters of a chunk's text (default 1200). */
  maxChars?: number;
  /** Characters repeated from the end of the previous window of the same section (default 200). */
  overlap?: number;
  /** At most this many chunks per document (default 2000); the rest of a very long document is not indexed. */
  maxChunks?: number;
}

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;

interface Section {
  path: string[];
  lines: string[];
}

function sections(text: string): Section[] {
  const out: Section[] = [];
  const stack: string[] = [];
  let cur: Section = { path: [], lines: [] };
  let fence = false;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const m = fence ? null : HEADING.exec(line);
    if (m) {
      if (cur.lines.join('').trim()) out.push(cur);
      const level = m[1].length;
      stack.length = Math.min(stack.length, level - 1);
      while (stack.length < level - 1) stack.push('');
      stack.push(m[2].trim());
      cur = { path: stack.filter(Boolean), lines: [] };
    } else cur.lines.push(line);
  }
  if (cur.lines.join('').trim()) out.push(cur);
  return out;
}

/** Split a long text into windows of at most `max` characters, cut at paragraph, line or sentence ends, with `overlap`. */
function windows(text: string, max: number, overlap: number): string[] {
  if (text.length <= max) return [text];
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + max);
    if (end < text.length) {
      const slice = text.slice(start, end);
      const cut = Math.max(slice.lastIndexOf('\n\n'), slice.lastIndexOf('\n'), slice.lastIndexOf('. '));
      if (cut > max * 0.5) end = start + cut + 1;
    }
    out.push(text.slice(start, end).trim());
    if (end >= text.length) break;
    let next = Math.max(end - overlap, start + 1);
    const space = text.indexOf(' ', next);
    if (space > 0 && space < end) next = space + 1;
    start = next;
  }
  return out.filter(Boolean);
}

/**
 * Chunk a document.
 * @param title the document's title (prefix of every chunk title).
 * @param text Markdown or plain text.
 * @returns chunks in order with `chunk_ix` 0..n-1.
 */
export function chunkDocument(title: string, text: string, opts: ChunkOptions = {}): Chunk[] {
  const max = opts.maxChars ?? 1200;
  const overlap = opts.overlap ?? 200;
  const limit = opts.maxChunks ?? 2000;
  const out: Chunk[] = [];
  const secs = sections(text);
  if (!secs.length && title.trim()) secs.push({ path: [], lines: [title] });
  for (const s of secs) {
    const body = s.lines
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    const path = s.path[0] && s.path[0].toLowerCase() === title.trim().toLowerCase() ? s.path.slice(1) : s.path;
    const heading = [title, ...path].filter(Boolean).join(' › ');
    for (const w of windows(body, max, overlap)) {
      if (out.length >= limit) return out;
      out.push({ chunk_ix: out.length, title: heading, text: w });
    }
  }
  return out;
}

/**
 * Document sources of the shared semantic index (docs/ARCHITECTURE.md, Shared semantic index, help assistant, public
 * docs). Each area that owns indexable documents (wiki, issue, skill, transcript, note source) exports a loader for its
 * `doc_type`; the composition root hands them to the index, which asks the loader for the current text when a
 * `knowledge.index` job arrives, so the index never holds a copy the owner has since changed or deleted.
 *
 * To have a document (re)indexed, its owner sends, inside the transaction that changed it:
 *   `jobs.send('knowledge.index', { project_id, doc_type, doc_id }, { tx })`.
 */

export type DocType =
  | 'wiki'
  | 'issue'
  | 'skill'
  | 'transcript'
  | 'note_source'
  | 'memory'
  | 'doc'
  // the shipped skill catalog (modules/sage)
  | 'catalog_skill';

export interface IndexJob {
  /** null for global documents (global skills, public docs). */
  project_id: number | null;
  doc_type: DocType;
  /** The owner's identifier of the document: wiki path, issue id, skill id, … as a string. */
  doc_id: string;
}

/**
 * Where a passage is in its document (docs/ARCHITECTURE.md, Citations and locations); only the fields that apply to
 * the source type are set: `page`–`page_end` (1-based PDF pages; `page_end` only when the passage runs onto a later
 * page), `start_ms`–`end_ms` (milliseconds into a recording: the start of the passage's first speech segment and the
 * end of its last), `heading` (the heading path inside the document, e.g. "Setup › Database"), `line_start`–`line_end`
 * (1-based lines of the document's text, for text documents).
 */
export interface PassageLocation {
  page?: number;
  page_end?: number;
  start_ms?: number;
  end_ms?: number;
  heading?: string;
  line_start?: number;
  line_end?: number;
  /** An issue's passage: the id of its first activity entry (`GET …/issues/:id` `activity[].id`). */
  activity_id?: number;
  /** An issue's passage over several entries: the id of its last one. */
  activity_id_end?: number;
}

/**
 * A position in a document's text: from character offset `at` on (until the next mark) the text is of this PDF
 * `page`, of the speech segment `start_ms`–`end_ms`, or of an issue's activity entry `activity_id`. Marks are sorted
 * by `at`.
 */
export interface TextMark {
  at: number;
  page?: number;
  start_ms?: number;
  end_ms?: number;
  activity_id?: number;
}

export interface LoadedDocument {
  title: string;
  /** Markdown or plain text; headings (`#`) guide chunking. */
  text: string;
  scope: 'project' | 'global';
  /**
   * Page or speech-segment positions in `text` (sorted by `at`): chunks then carry pages or timecodes instead of
   * line numbers.
   */
  marks?: TextMark[];
  /** Characters of the whole document when `text` is only its beginning (the owner cut it); default text.length. */
  fullChars?: number;
}

/** @returns the document, or null when it no longer exists (the indexer then removes its chunks). */
export type DocLoader = (projectId: number | null, docId: string) => Promise<LoadedDocument | null>;

/** The loader of each document type (absent types are skipped by the indexer). */
export type DocLoaders = Partial<Record<DocType, DocLoader>>;

/** `h:mm:ss` → `00:14:05` style clock of milliseconds (hours always shown, two digits each). */
export function clockOf(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}`;
}

/**
 * A short label of a location, as answers cite it: `p. 12` (`pp. 12–13`), `00:14:05`, `§ Setup › Database`,
 * `lines 3–9`; '' when the location says nothing. Pages or timecodes take precedence over the heading, the heading
 * over lines.
 */
export function locationLabel(loc: PassageLocation | null | undefined): string {
  if (!loc) return '';
  if (loc.page !== undefined)
    return loc.page_end && loc.page_end > loc.page ? `pp. ${loc.page}–${loc.page_end}` : `p. ${loc.page}`;
  if (loc.start_ms !== undefined) return clockOf(loc.start_ms);
  if (loc.heading) return `§ ${loc.heading}`;
  if (loc.line_start !== undefined)
    return loc.line_end && loc.line_end > loc.line_start
      ? `lines ${loc.line_start}–${loc.line_end}`
      : `line ${loc.line_start}`;
  return '';
}

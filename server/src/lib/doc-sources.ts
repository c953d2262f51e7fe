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

export interface LoadedDocument {
  title: string;
  /** Markdown or plain text; headings (`#`) guide chunking. */
  text: string;
  scope: 'project' | 'global';
}

/** @returns the document, or null when it no longer exists (the indexer then removes its chunks). */
export type DocLoader = (projectId: number | null, docId: string) => Promise<LoadedDocument | null>;

/** The loader of each document type (absent types are skipped by the indexer). */
export type DocLoaders = Partial<Record<DocType, DocLoader>>;

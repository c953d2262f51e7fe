/**
 * Citations a reader can check (docs/ARCHITECTURE.md, Shared semantic index, Citations and locations):
 * - `knowledge_chunks.location`: where the passage is in its document (`{page?, page_end?, start_ms?, end_ms?,
 *   heading?, line_start?, line_end?}`), null when unknown;
 * - `knowledge_documents.total_chars` / `indexed_chars`: how much of the document's text the chunks cover (a
 *   document longer than the index's limits is indexed in part and says so);
 * - `note_sources.content_marks` and `transcripts.transcript_segments`: the page and speech-segment positions of the
 *   extracted text (`[{at, page?, start_ms?, end_ms?}]`, `at` a character offset), from which chunks get locations;
 * - `note_chat_messages.citations`: an answer's citations (`[{marker, source_id, chunk_id, location, quote}]`).
 * Every indexed document is marked for re-indexing (its embedder is forgotten): the start step queues it again, so
 * existing chunks gain their locations.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table knowledge_chunks add column location jsonb;
    alter table knowledge_documents add column total_chars integer;
    alter table knowledge_documents add column indexed_chars integer;
    alter table note_sources add column content_marks jsonb;
    alter table transcripts add column transcript_segments jsonb;
    alter table note_chat_messages add column citations jsonb not null default '[]';
    update knowledge_documents set embedder = null, content_hash = null;
  `.execute(db);
}

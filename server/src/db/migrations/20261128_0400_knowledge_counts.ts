/**
 * Chunk counts of the semantic index by project (issue 31): the vector channel chooses between an exact scan (small
 * candidate sets) and the HNSW index (large ones) by how many chunks a search may see, and reads that here in one row
 * per project instead of counting chunks per query. `project_key` is `coalesce(project_id, 0)` (0: the global
 * documents). A deferred constraint trigger on `knowledge_documents` keeps the counts from `chunk_count`, so every
 * path (indexing, removal, erasure, a project's cascade) updates them, and at commit time: two index jobs of one
 * project hold the counter row only for the moment of their commit.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table knowledge_chunk_counts (
      project_key integer primary key,
      chunks bigint not null default 0
    );
    insert into knowledge_chunk_counts (project_key, chunks)
      select coalesce(project_id, 0), sum(chunk_count) from knowledge_documents group by 1;

    create function knowledge_chunk_counts_apply() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') then
        update knowledge_chunk_counts set chunks = chunks - old.chunk_count
          where project_key = coalesce(old.project_id, 0);
        -- A project with no chunks left (removed, erased) leaves no row behind.
        delete from knowledge_chunk_counts where project_key = coalesce(old.project_id, 0) and chunks = 0
          and tg_op = 'DELETE';
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into knowledge_chunk_counts (project_key, chunks) values (coalesce(new.project_id, 0), new.chunk_count)
          on conflict (project_key) do update set chunks = knowledge_chunk_counts.chunks + excluded.chunks;
      end if;
      return null;
    end
    $$;
    create constraint trigger knowledge_documents_counts
      after insert or update of chunk_count, project_id or delete on knowledge_documents
      deferrable initially deferred
      for each row execute function knowledge_chunk_counts_apply();
  `.execute(db);
}

/**
 * Statements compiled once, for the hot paths (a run's turn, a model call's reservation and settlement, an activity
 * event): their SQL text is fixed, so Kysely's query builder and compiler do not run for each execution (they took
 * ~6 % of the process's CPU in bench/runtime.ts, whose runs are CPU-bound on the embedded database's one
 * connection). Each repository keeps its own SQL text; only statements whose text never depends on their values
 * belong here (no `in` lists, no optional columns: a value that may be left as it is goes through `coalesce`).
 */
import { CompiledQuery, type Kysely, type QueryResult, type Transaction } from 'kysely';

/** The statement `text` (`$1`, `$2`… placeholders), run on `ex` with `params` in their order. */
export type Precompiled<R> = (
  ex: Kysely<any> | Transaction<any>,
  params: readonly unknown[],
) => Promise<QueryResult<R>>;

/** Compile `text` once (whitespace collapsed). @returns the statement to run with its parameters. */
export function precompiled<R = unknown>(text: string): Precompiled<R> {
  const once = text.replace(/\s+/g, ' ').trim();
  return (ex, params) => ex.executeQuery<R>(CompiledQuery.raw(once, params as unknown[]));
}

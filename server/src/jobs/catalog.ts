/**
 * The service's job catalog: every durable job name bound to its payload type. `JobQueue` (queue.ts)
 * is typed by it, so `jobs.send('runtime.run', { run_id })` with another payload does not compile.
 * A new area adds its jobs here (payloads are plain JSON: ids and small values, never secrets).
 */
import type { IndexJob } from '../lib/doc-sources.ts';

export interface JobCatalog {
  /** Execute one agent run (modules/runtime). */
  'runtime.run': { run_id: number };
  /** (Re)index one document of the semantic index (modules/knowledge). */
  'knowledge.index': IndexJob;
}

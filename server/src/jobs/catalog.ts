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
  /** Charge the saved card for the next period of a subscription (modules/billing): attempt 1–3, period end ISO. */
  'billing.renew': { user_id: number; period_end: string; attempt: number };
  /** After an erasure committed: each area's clean-up outside the rows (modules/privacy). */
  'privacy.after_erase': { user_id: number; project_ids: number[] };
  /** The daily retention purge of one UTC day `YYYY-MM-DD` (modules/privacy). */
  'privacy.retention': { day: string };
  /** Every hour (pg-boss's schedule): claim and queue today's retention purge unless done (modules/privacy). */
  'privacy.retention_check': Record<string, never>;
  /** Extract the text of one note source (modules/notes). */
  'notes.process': { source_id: number };
  /** Run the transcript pipeline while it has work (modules/transcripts; one instance at a time). */
  'transcripts.pump': Record<string, never>;
  /** Another delivery attempt of an outbox message whose delivery failed (providers/mail). */
  'mail.retry': { outbox_id: number };
  /** Expire one approval still pending after `APPROVAL_TIMEOUT_S` (modules/runtime, approvals; sent delayed). */
  'approvals.expire': { approval_id: number };
  /**
   * Tell the owner about a new approval through one channel (modules/runtime, approvals; the worker's label), or
   * (`messenger_decided`) show a decision made elsewhere on the request's messenger message.
   */
  'approvals.notify': { approval_id: number; channel: 'messenger' | 'email' | 'messenger_decided'; worker: string };
}

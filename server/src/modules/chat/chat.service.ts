/**
 * Chat with workers (docs/ARCHITECTURE.md, Worker runtime): the streamed chat, its
 * paged history and the active role (the worker the chat talks to by default).
 * A chat message is an ordinary message to one worker (runtime.submit): its run executes as a durable
 * job on any instance; the stream follows the run's events, which reach it over the event bus wherever the
 * run executes (runtime/events.ts), and, as a fallback for a message the bus lost, the run row (polled every
 * POLL_MS), so it always ends with `done`.
 */
import type { Actor } from '../../http/auth.ts';
import type { Access, ProjectRef } from '../../access/access.ts';
import { BadRequest, NotFound } from '../../http/errors.ts';
import type { SseEvent } from '../../http/sse.ts';
import { follow } from '../../lib/follow.ts';
import type { RuntimeService } from '../runtime/runtime.service.ts';
import type { RunEvent, RunEvents } from '../runtime/events.ts';
import type { RuntimeRepo } from '../runtime/runtime.repo.ts';
import type { WorkersRepo } from '../workers/workers.repo.ts';
import type { ChatRepo } from './chat.repo.ts';

const POLL_MS = 1000;

/** What the chat service uses. */
export interface ChatDeps {
  repo: ChatRepo;
  /** Chat history and the state of a followed run (the runtime owns messages and runs). */
  runs: Pick<RuntimeRepo, 'messages' | 'status'>;
  /** The worker of the active role. */
  workers: Pick<WorkersRepo, 'brief' | 'first'>;
  access: Access;
  runtime: Pick<RuntimeService, 'submit' | 'getRun'>;
  events: RunEvents;
}

/** The chat service (module header); built once by the composition root. */
export function createChatService(deps: ChatDeps) {
  const { repo } = deps;

  const workerRole = (w: { id: number; role: string | null; label: string }) => ({
    worker_id: w.id,
    role: w.role ?? w.label,
  });

  /** The caller's active role in the project, else the first worker; null when the project has none. */
  async function active(project: ProjectRef, userId: number) {
    const chosenId = await repo.activeWorkerId(project.id, userId);
    const chosen = chosenId === undefined ? undefined : await deps.workers.brief(project.id, chosenId);
    if (chosen) return chosen;
    return deps.workers.first(project.id);
  }

  return {
    /**
     * `GET /projects/:name/active-role` → `{worker_id, role}` (role: the worker's role, else its label; nulls without
     * workers).
     */
    async getActiveRole(actor: Actor, name: string) {
      const project = await deps.access.project(actor, name);
      const w = await active(project, actor.id);
      return w ? workerRole(w) : { worker_id: null, role: null };
    },

    /** `POST /projects/:name/active-role` `{worker_id}` → `{worker_id, role}`. @throws 404 `worker_not_found`. */
    async setActiveRole(actor: Actor, name: string, workerId: number) {
      const project = await deps.access.project(actor, name);
      const w = await deps.workers.brief(project.id, workerId);
      if (!w) throw new NotFound(`Worker ${workerId} was not found in this project.`, 'worker_not_found');
      await repo.setActiveWorker(project.id, actor.id, w.id);
      return workerRole(w);
    },

    /**
     * `GET /projects/:name/chat/history?worker_id=&limit=&before=`: the newest `limit` (1–200, default 50)
     * messages with id below `before`, returned oldest first; with `worker_id` only that worker's
     * conversation (messages to it, parallel ones included, and its replies).
     * @returns `{messages:[{id, role, worker_id, content, created_at, run_id}], has_more}`.
     */
    async history(actor: Actor, name: string, q: { worker_id?: number; limit?: number; before?: number }) {
      const project = await deps.access.project(actor, name);
      const limit = q.limit ?? 50;
      const rows = await deps.runs.messages(project.id, { workerId: q.worker_id, before: q.before, limit: limit + 1 });
      return { messages: rows.slice(0, limit).reverse(), has_more: rows.length > limit };
    },

    /**
     * `POST /projects/:name/chat` `{text, worker_id?}` (default: the active role): send the message and
     * follow its run. Errors (access, budget, key, no worker) are thrown before anything streams.
     * @returns the user message id, the run id and the events to stream: `text_delta {delta}`,
     *   `tool_result {tool, is_error, …}`, `cascade_escalated {class, from, to}`, then
     *   `done {message_id (the reply), user_message_id, run_id, status, usage, error}`.
     */
    async stream(actor: Actor, name: string, body: { text: string; worker_id?: number }) {
      const project = await deps.access.project(actor, name);
      const workerId = body.worker_id ?? (await active(project, actor.id))?.id;
      if (!workerId) throw new BadRequest('no_worker', 'This project has no worker to chat with yet.');
      /** A run event as it came, or the run's stored status (read when no event came for POLL_MS). */
      type Item = RunEvent | { type: 'status'; status: string | undefined };
      let stream: AsyncGenerator<SseEvent, void, undefined> | undefined;
      let sawText = false;
      const submitted = await deps.runtime
        .submit(
          actor,
          name,
          { worker_id: workerId, text: body.text },
          {
            // Follow the run from before its job can start, so no event is missed.
            beforeCommit: ([runId]) => {
              stream = follow<Item, SseEvent>({
                listen: (notify) => deps.events.subscribe(runId, notify),
                read: async () => ({ type: 'status', status: await deps.runs.status(runId) }),
                readFirst: false,
                pollMs: POLL_MS,
                isNew: (e, last) => e.type !== 'status' || last?.type !== 'status' || e.status !== last.status,
                isDone: (e) =>
                  e.type === 'end' || (e.type === 'status' && !['queued', 'running'].includes(e.status ?? '')),
                emit: (e) => {
                  if (e.type === 'end' || e.type === 'status') return [];
                  if (e.type === 'text_delta') {
                    sawText = true;
                    return [{ event: 'text_delta', data: { delta: e.delta } }];
                  }
                  const { type, ...rest } = e;
                  return [{ event: type, data: rest }];
                },
                end: () => finish(runId),
              });
            },
          },
        )
        .catch(async (err) => {
          await stream?.return(undefined);
          throw err;
        });
      /** The last event: the stored reply (when no text streamed) and `done` with the run's outcome. */
      async function finish(runId: number): Promise<SseEvent[]> {
        const run = await deps.runtime.getRun(actor, name, runId);
        const out: SseEvent[] = [];
        if (!sawText && run.reply) out.push({ event: 'text_delta', data: { delta: run.reply } });
        out.push({
          event: 'done',
          data: {
            message_id: run.reply_message_id,
            user_message_id: submitted.message_id,
            run_id: run.id,
            status: run.status,
            usage: run.usage,
            error: run.error,
            error_message: run.error_message,
          },
        });
        return out;
      }
      const runId = submitted.run_ids[0];
      return { message_id: submitted.message_id, run_id: runId, events: stream! };
    },
  };
}

export type ChatService = ReturnType<typeof createChatService>;

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
import type { RunView, RuntimeService } from '../runtime/runtime.service.ts';
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
  runtime: Pick<RuntimeService, 'submit' | 'getRun' | 'progress'>;
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
      let stream: AsyncGenerator<SseEvent, void, undefined> | undefined;
      const submitted = await deps.runtime
        .submit(
          actor,
          name,
          { worker_id: workerId, text: body.text },
          {
            // Follow the run from before its job can start, so no event is missed.
            beforeCommit: ([runId]) => {
              stream = followRun(actor, name, runId, false);
            },
          },
        )
        .catch(async (err) => {
          await stream?.return(undefined);
          throw err;
        });
      const runId = submitted.run_ids[0];
      return { message_id: submitted.message_id, run_id: runId, events: stream! };
    },

    /**
     * `GET /projects/:name/runs/:id/events`: re-attach to a run (after a reload or a lost connection; the run goes
     * on on the server). First `snapshot {run_id, status, text, tool_calls}` (`text`: what the run has written so
     * far, see RuntimeService.progress), then, while it is queued or running, the events `stream` sends, ending with
     * `done` (a run already ended, or waiting for an approval, gets `done` at once).
     * @throws 404 `run_not_found`.
     */
    async follow(actor: Actor, name: string, runId: number) {
      // Listen before reading the snapshot, so an event between the two is not lost (it may repeat the snapshot's
      // last turn; `done` carries the whole reply).
      const live = followRun(actor, name, runId, true);
      try {
        const { run, text } = await deps.runtime.progress(actor, name, runId);
        const snapshot: SseEvent = {
          event: 'snapshot',
          data: { run_id: run.id, status: run.status, text, tool_calls: run.tool_calls },
        };
        if (ACTIVE.includes(run.status)) return { events: prepend(snapshot, live) };
        await live.return(undefined);
        return {
          events: prepend(
            snapshot,
            (async function* () {
              yield doneEvent(run);
            })(),
          ),
        };
      } catch (err) {
        await live.return(undefined);
        throw err;
      }
    },
  };

  /**
   * The events of run `runId` as it goes on (module header): `text_delta`, `tool_result`, `approval_requested`,
   * `cascade_escalated`, then `done` when it leaves queued/running. `sawTextFirst`: the client already has text, so
   * the stored reply is never sent as a delta.
   */
  function followRun(actor: Actor, name: string, runId: number, sawTextFirst: boolean) {
    /** A run event as it came, or the run's stored status (read when no event came for POLL_MS). */
    type Item = RunEvent | { type: 'status'; status: string | undefined };
    let sawText = sawTextFirst;
    return follow<Item, SseEvent>({
      listen: (notify) => deps.events.subscribe(runId, notify),
      read: async () => ({ type: 'status', status: await deps.runs.status(runId) }),
      readFirst: false,
      pollMs: POLL_MS,
      isNew: (e, last) => e.type !== 'status' || last?.type !== 'status' || e.status !== last.status,
      isDone: (e) => e.type === 'end' || (e.type === 'status' && !ACTIVE.includes(e.status ?? '')),
      emit: (e) => {
        if (e.type === 'end' || e.type === 'status') return [];
        if (e.type === 'text_delta') {
          sawText = true;
          return [{ event: 'text_delta', data: { delta: e.delta } }];
        }
        const { type, ...rest } = e;
        return [{ event: type, data: rest }];
      },
      end: async () => {
        const run = await deps.runtime.getRun(actor, name, runId);
        const out: SseEvent[] = [];
        if (!sawText && run.reply) out.push({ event: 'text_delta', data: { delta: run.reply } });
        out.push(doneEvent(run));
        return out;
      },
    });
  }
}

/** Statuses of a run that still goes on by itself (a run waiting for an approval waits for a person). */
const ACTIVE: string[] = ['queued', 'running'];

/** The last event of a followed run: its outcome and its whole reply. */
function doneEvent(run: RunView): SseEvent {
  return {
    event: 'done',
    data: {
      message_id: run.reply_message_id,
      user_message_id: run.message_id,
      run_id: run.id,
      status: run.status,
      usage: run.usage,
      error: run.error,
      error_message: run.error_message,
      reply: run.reply,
    },
  };
}

/** `first`, then the events of `rest`; ending the result ends `rest`. */
async function* prepend(first: SseEvent, rest: AsyncGenerator<SseEvent, void, undefined>) {
  try {
    yield first;
    yield* rest;
  } finally {
    await rest.return(undefined);
  }
}

export type ChatService = ReturnType<typeof createChatService>;

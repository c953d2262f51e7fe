/** Routes of the worker chat: streamed chat (SSE), history, active role. */
import { Type } from 'typebox';
import { requireActor } from '../../http/auth.ts';
import type { TypedApp } from '../../http/typed-app.ts';
import { DateTime, errors, Nullable, projectIdParams, ProjectParam } from '../../http/schemas.ts';
import type { ChatService } from './chat.service.ts';
import { openSse, pipeSse } from '../../http/sse.ts';

const NameParam = ProjectParam;
const RunParams = projectIdParams('the run id');
const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });
const ActiveRole = Type.Object({ worker_id: Nullable(Type.Integer()), role: Nullable(Type.String()) });

export function chatRoutes(app: TypedApp, { chat }: { chat: ChatService }): void {
  const tags = ['chat'];

  app.post(
    '/api/crm/projects/:name/chat',
    {
      schema: {
        tags,
        summary: 'Chat with a worker; the reply streams as server-sent events',
        description:
          'Events: text_delta {delta}, tool_result {tool, is_error, …}, cascade_escalated {class, from, to}, done {message_id, user_message_id, run_id, status, usage, error, error_message, reply}. Comment heartbeats every 15 s.',
        params: NameParam,
        body: Type.Object(
          { text: Type.String({ minLength: 1, maxLength: 32_000 }), worker_id: Type.Optional(Id) },
          { additionalProperties: false },
        ),
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...errors(400, 401, 403, 404, 429, 503) },
      },
    },
    async (req, reply) => {
      const { events } = await chat.stream(requireActor(req), req.params.name, req.body);
      reply.hijack();
      openSse(reply.raw, reply.getHeaders());
      await pipeSse(reply.raw, events, { heartbeatMs: 15_000 });
    },
  );
  app.get(
    '/api/crm/projects/:name/runs/:id/events',
    {
      schema: {
        tags,
        summary: "Follow a run's events (re-attach to a reply after a reload or a lost connection)",
        description:
          'Events: snapshot {run_id, status, text, tool_calls} (the text written so far), then, while the run is queued or running, the events of the chat stream (text_delta, tool_result, approval_requested, cascade_escalated), and done {message_id, user_message_id, run_id, status, usage, error, error_message, reply}. A run that ended or waits for an approval gets done at once. Comment heartbeats every 15 s.',
        params: RunParams,
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const { events } = await chat.follow(requireActor(req), req.params.name, req.params.id);
      reply.hijack();
      openSse(reply.raw, reply.getHeaders());
      await pipeSse(reply.raw, events, { heartbeatMs: 15_000 });
    },
  );
  app.get(
    '/api/crm/projects/:name/chat/history',
    {
      schema: {
        tags,
        summary: 'Chat history, oldest first (page back with before=<smallest id>)',
        params: NameParam,
        querystring: Type.Object({
          worker_id: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 2147483647, description: 'only the conversation with this worker' }),
          ),
          limit: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 200,
              default: 50,
              description: 'messages per page (default 50, at most 200)',
            }),
          ),
          before: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 2147483647,
              description: 'cursor: only messages older than this message id (the smallest id of the previous page)',
            }),
          ),
        }),
        response: {
          200: Type.Object({
            messages: Type.Array(
              Type.Object({
                id: Type.Integer(),
                role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
                worker_id: Nullable(Type.Integer()),
                content: Type.String(),
                created_at: DateTime(),
                run_id: Nullable(Type.Integer()),
              }),
            ),
            has_more: Type.Boolean(),
          }),
          ...errors(400, 401, 403, 404),
        },
      },
    },
    async (req) => chat.history(requireActor(req), req.params.name, req.query),
  );
  app.get(
    '/api/crm/projects/:name/active-role',
    {
      schema: {
        tags,
        summary: 'The worker the chat talks to by default',
        params: NameParam,
        response: { 200: ActiveRole, ...errors(401, 403, 404) },
      },
    },
    async (req) => chat.getActiveRole(requireActor(req), req.params.name),
  );
  app.post(
    '/api/crm/projects/:name/active-role',
    {
      schema: {
        tags,
        summary: 'Choose the worker the chat talks to',
        params: NameParam,
        body: Type.Object({ worker_id: Id }, { additionalProperties: false }),
        response: { 200: ActiveRole, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => chat.setActiveRole(requireActor(req), req.params.name, req.body.worker_id),
  );
}

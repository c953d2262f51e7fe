/**
 * Help assistant routes (specification, Help assistant): chat at `/api/crm/help/chat` and at the server
 * root `/help/chat`, usage, history, delete history.
 */
import { Type } from '@sinclair/typebox';
import type { TypedApp } from '../../http/typed-app.ts';
import { requireActor } from '../../http/auth.ts';
import { DateTime, errors } from '../../http/schemas.ts';
import type { HelpService } from './help.service.ts';

const ChatBody = Type.Object({
  message: Type.String({
    minLength: 1,
    maxLength: 20000,
    description: 'at most 2000 characters (longer: 400 message_too_long)',
  }),
  history: Type.Optional(
    Type.Array(
      Type.Object({
        role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
        text: Type.String({ maxLength: 20000 }),
      }),
      { maxItems: 100 },
    ),
  ),
});
const ChatAnswer = Type.Object({
  reply: Type.String(),
  sources: Type.Array(Type.String()),
  remaining: Type.Integer(),
  limit: Type.Integer(),
});
const Usage = Type.Object({ remaining: Type.Integer(), limit: Type.Integer(), used: Type.Integer() });
const History = Type.Object({
  messages: Type.Array(
    Type.Object({
      role: Type.String(),
      text: Type.String(),
      sources: Type.Array(Type.String()),
      created_at: DateTime(),
    }),
  ),
});

export function helpRoutes(app: TypedApp, { help }: { help: HelpService }): void {
  const tags = ['help'];
  for (const url of ['/api/crm/help/chat', '/help/chat']) {
    app.post(
      url,
      {
        schema: {
          tags,
          summary: 'Ask the help assistant (30 messages a day)',
          body: ChatBody,
          response: { 200: ChatAnswer, ...errors(400, 401, 429, 502, 503) },
        },
      },
      async (req) => help.chat(requireActor(req), req.body),
    );
  }
  app.get(
    '/api/crm/help/usage',
    {
      schema: {
        tags,
        summary: "Today's help messages: remaining, limit, used",
        response: { 200: Usage, ...errors(401) },
      },
    },
    async (req) => help.usage(requireActor(req)),
  );
  app.get(
    '/api/crm/help/history',
    {
      schema: { tags, summary: 'The last 60 help messages, oldest first', response: { 200: History, ...errors(401) } },
    },
    async (req) => help.history(requireActor(req)),
  );
  app.delete(
    '/api/crm/help/history',
    {
      schema: {
        tags,
        summary: "Delete the caller's help messages",
        response: { 200: Type.Object({ ok: Type.Boolean() }), ...errors(401) },
      },
    },
    async (req) => help.deleteHistory(requireActor(req)),
  );
}

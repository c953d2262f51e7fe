/**
 * Help assistant routes (docs/ARCHITECTURE.md, Shared semantic index, help assistant, public docs): chat at
 * `/api/crm/help/chat` and at the server root `/help/chat`, usage, history, delete history.
 */
import { Type } from 'typebox';
import type { TypedApp } from '../../http/typed-app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import { ChatAnswer, ChatBody, History, Usage } from './help.schemas.ts';
import type { HelpService } from './help.service.ts';

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

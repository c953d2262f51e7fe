/** Messenger routes: the one-time code that links a messenger chat to the caller's account. */
import type { TypedApp } from '../../http/typed-app.ts';
import { requireActor } from '../../http/auth.ts';
import { errors } from '../../http/schemas.ts';
import { LinkCode } from './messenger.schemas.ts';
import type { MessengerService } from './messenger.service.ts';

export function messengerRoutes(app: TypedApp, { messenger }: { messenger: MessengerService }): void {
  app.post(
    '/api/crm/account/messenger-link',
    {
      schema: {
        tags: ['account'],
        summary: 'A one-time code linking a messenger chat to your account',
        description:
          'Send `/start <code>` to any bot bound to one of your workers within 15 minutes: that chat becomes your ' +
          "account's chat id, and the workers' bots answer your messages there (anyone else gets a short refusal). " +
          'A new code replaces the previous one.',
        response: { 200: LinkCode, ...errors(401) },
      },
    },
    async (req) => messenger.linkCode(requireActor(req)),
  );
}

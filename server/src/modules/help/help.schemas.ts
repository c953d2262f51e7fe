/** Request and answer schemas of the help assistant (TypeBox: validates, serializes, documents). */
import { Type } from 'typebox';
import { DateTime, PassageLocation } from '../../http/schemas.ts';

export const ChatBody = Type.Object({
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
export const ChatAnswer = Type.Object({
  reply: Type.String(),
  sources: Type.Array(Type.String()),
  citations: Type.Array(Type.Object({ source: Type.String(), location: PassageLocation }), {
    description: 'the passages in the context, in the order of sources, with where each is in its document',
  }),
  remaining: Type.Integer(),
  limit: Type.Integer(),
});
export const Usage = Type.Object({ remaining: Type.Integer(), limit: Type.Integer(), used: Type.Integer() });
export const History = Type.Object({
  messages: Type.Array(
    Type.Object({
      role: Type.String(),
      text: Type.String(),
      sources: Type.Array(Type.String()),
      created_at: DateTime(),
    }),
  ),
});

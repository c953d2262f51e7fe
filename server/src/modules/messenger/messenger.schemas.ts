/** API shapes of the messenger area (TypeBox). */
import { Type } from 'typebox';
import { DateTime } from '../../http/schemas.ts';

export const LinkCode = Type.Object(
  {
    code: Type.String({ description: 'the one-time code (8 characters), valid for 15 minutes' }),
    command: Type.String({ description: 'what to send to any worker bot of yours: `/start <code>`' }),
    expires_at: DateTime({ description: 'when the code stops working' }),
  },
  {
    examples: [{ code: 'K7QM4XPA', command: '/start K7QM4XPA', expires_at: '2026-11-24T12:15:00.000Z' }],
  },
);

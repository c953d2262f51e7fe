/** API shapes of the privacy area (account erasure and data export). */
import { Type } from 'typebox';

export const EraseBody = Type.Object(
  {
    confirm: Type.String({
      maxLength: 100,
      description: 'must be exactly `DELETE MY ACCOUNT`; anything else is refused with 400',
    }),
  },
  { additionalProperties: false },
);

export const EraseAnswer = Type.Object({
  ok: Type.Literal(true),
  email: Type.String({ description: 'the erased account’s e-mail' }),
  message: Type.String(),
});

/** Schema pieces shared by every area (TypeBox). */
import { Type, type TSchema } from '@sinclair/typebox';

/** An ISO-8601 timestamp in answers; services may hand a Date (serialized as ISO). */
export const DateTime = (opts: { description?: string } = {}) =>
  Type.Unsafe<Date | string>({ type: 'string', format: 'date-time', ...opts });
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'snake_case code' }),
    message: Type.String({ description: 'one human sentence' }),
  },
  { additionalProperties: true, description: 'The error envelope (CONTRACT.md §4).' },
);
/** Response schemas for the given error statuses, all the envelope. */
export const errors = (...codes: number[]): Record<number, typeof ErrorBody> =>
  Object.fromEntries(codes.map((c) => [c, ErrorBody]));
export const Ok = Type.Object({ ok: Type.Boolean() });
export const IdParam = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) });

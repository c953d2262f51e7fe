import { describe, expect, it } from 'vitest';
import { Type, type TSchema } from 'typebox';
import { isDataException, validationDetails, type ValidationError } from './errors.ts';
import { prepareSchema, requestAjv } from './input.ts';

/** The details of validating `data` against `schema` as a body, through the request validator. */
function detailsFor(schema: TSchema, data: unknown, part = 'body') {
  const validate = requestAjv(part === 'body' ? false : 'array').compile(
    prepareSchema(schema, part === 'body') as object,
  );
  expect(validate(data)).toBe(false);
  return validationDetails(validate.errors as ValidationError[], part);
}

const Status = Type.Union([Type.Literal('open'), Type.Literal('closed')]);

describe('validationDetails', () => {
  it('names an unknown field; a key that does not look like a field name is not repeated', () => {
    const S = Type.Object({ email: Type.String() });
    expect(detailsFor(S, { email: 'a', extra: 1 })).toEqual([{ path: 'body/extra', message: "unknown field 'extra'" }]);
    expect(detailsFor(S, { email: 'a', '<script>': 1 })).toEqual([{ path: 'body', message: 'has an unknown field' }]);
  });

  it('names a missing field', () => {
    expect(detailsFor(Type.Object({ title: Type.String() }), {})).toEqual([
      { path: 'body/title', message: 'is required' },
    ]);
  });

  it('lists the allowed values of a union of literals (and null when it is nullable)', () => {
    expect(detailsFor(Type.Object({ status: Status }), { status: 'bogus' })).toEqual([
      { path: 'body/status', message: "must be one of: 'open', 'closed'" },
    ]);
    expect(detailsFor(Type.Object({ s: Type.Union([Status, Type.Null()]) }), { s: 5 })[0].message).toBe(
      "must be one of: 'open', 'closed', null",
    );
    expect(detailsFor(Type.Object({ s: Type.Union([Type.Literal(1), Type.Literal(2)]) }), { s: 3 })[0].message).toBe(
      'must be one of: 1, 2',
    );
    expect(
      detailsFor(Type.Object({ e: Type.Unsafe({ type: 'string', enum: ['a', 'b'] }) }), { e: 'c' })[0].message,
    ).toBe("must be one of: 'a', 'b'");
  });

  it('folds the branches of other unions: the branch of the right type speaks, else the accepted types', () => {
    const S = Type.Object({ a: Type.Union([Type.String({ maxLength: 3 }), Type.Null()]) });
    expect(detailsFor(S, { a: 5 })).toEqual([{ path: 'body/a', message: 'must be string or null' }]);
    expect(detailsFor(S, { a: 'long' })).toEqual([{ path: 'body/a', message: 'must NOT have more than 3 characters' }]);
    const mixed = Type.Object({ m: Type.Union([Type.Literal('auto'), Type.Integer({ minimum: 1 })]) });
    expect(detailsFor(mixed, { m: 'x' })[0].message).toBe("must be 'auto' or integer");
    expect(detailsFor(mixed, { m: 0 })[0].message).toBe('must be >= 1');
  });

  it('describes formats and patterns in words, never with the regular expression', () => {
    const email = Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', description: 'an e-mail address' });
    const [p] = detailsFor(Type.Object({ email }), { email: 'nope' });
    expect(p).toEqual({ path: 'body/email', message: 'is not in the expected format (an e-mail address)' });
    const [q] = detailsFor(Type.Object({ slug: Type.String({ pattern: '^[a-z]+$' }) }), { slug: 'A!' });
    expect(q.message).toBe('is not in the expected format');
    const [f] = detailsFor(Type.Object({ at: Type.String({ format: 'date-time' }) }), { at: 'yesterday' });
    expect(f.message).toMatch(/^must be a date and time/);
    const [g] = detailsFor(Type.Object({ m: Type.String({ format: 'email' }) }), { m: 'x' });
    expect(g.message).toBe('must be an e-mail address');
    for (const d of [p, q, f, g]) expect(d.message).not.toMatch(/\^|\$|\\s|\[/);
  });

  it('bounds integers and refuses non-finite numbers with plain messages', () => {
    expect(detailsFor(Type.Object({ n: Type.Integer() }), { n: 1e20 })).toEqual([
      { path: 'body/n', message: 'must be <= 2147483647' },
    ]);
    expect(detailsFor(Type.Object({ f: Type.Number() }), { f: Infinity })).toEqual([
      { path: 'body/f', message: 'must be number' },
    ]);
  });

  it('uses the request part in the path, and never repeats the input', () => {
    const d = detailsFor(Type.Object({ limit: Type.Integer({ maximum: 5 }) }), { limit: '99999' }, 'querystring');
    expect(d).toEqual([{ path: 'querystring/limit', message: 'must be <= 5' }]);
    const secret = 'hunter2-very-secret';
    const all = [
      ...detailsFor(Type.Object({ s: Status }), { s: secret }),
      ...detailsFor(Type.Object({ s: Type.String({ maxLength: 3 }) }), { s: secret }),
      ...detailsFor(Type.Object({ s: Type.Integer() }), { s: secret }),
    ];
    expect(JSON.stringify(all)).not.toContain(secret);
  });
});

describe('isDataException', () => {
  it('is true for PostgreSQL SQLSTATE class 22 errors (or their cause), false otherwise', () => {
    const pg = (code: string) => Object.assign(new Error('x'), { code, severity: 'ERROR' });
    expect(isDataException(pg('22021'))).toBe(true);
    expect(isDataException(pg('22P02'))).toBe(true);
    expect(isDataException(new Error('wrapped', { cause: pg('22003') }))).toBe(true);
    expect(isDataException(pg('23505'))).toBe(false);
    expect(isDataException(Object.assign(new Error('x'), { code: '22021' }))).toBe(false);
    expect(isDataException(undefined)).toBe(false);
  });
});

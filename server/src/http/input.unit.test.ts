import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import {
  fieldSegment,
  findTextProblem,
  INT32_MAX,
  INT32_MIN,
  jsonDepth,
  MAX_JSON_DEPTH,
  prepareSchema,
  requestAjv,
  textIssue,
} from './input.ts';

describe('jsonDepth', () => {
  it('counts nested arrays and objects outside strings', () => {
    expect(jsonDepth('1')).toBe(0);
    expect(jsonDepth('{}')).toBe(1);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('[[],[],[[]]]')).toBe(3);
    expect(jsonDepth('"[[[[{{{{"')).toBe(0);
    expect(jsonDepth('{"a":"]]]]"}')).toBe(1);
  });

  it('follows escapes inside strings: an escaped quote does not end the string, an escaped backslash does not escape the quote', () => {
    expect(jsonDepth('["a\\"[[[", 1]')).toBe(1);
    expect(jsonDepth('["a\\\\", [[1]]]')).toBe(3);
    expect(jsonDepth('["\\\\\\"[[", 1]')).toBe(1);
  });

  it('stops early once past the limit, and copes with malformed text', () => {
    // Read whole, this text would be a million levels deep: the answer one past the limit shows it stopped there.
    const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    expect(jsonDepth(deep, MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
    expect(jsonDepth('["unterminated')).toBe(1);
    expect(jsonDepth(']]]')).toBe(0);
  });

  it('reads a megabyte of ordinary text to the end', () => {
    const big = JSON.stringify({ items: Array.from({ length: 20_000 }, (_, i) => ({ i, text: 'x'.repeat(40) })) });
    expect(jsonDepth(big, MAX_JSON_DEPTH)).toBe(3);
  });
});

describe('textIssue', () => {
  it('bodies: refuses NUL and unpaired surrogates, keeps tabs, newlines, emoji and other scripts', () => {
    expect(textIssue('a\u0000b', 'body')).toBe('nul');
    expect(textIssue('a\ud800b', 'body')).toBe('surrogate');
    expect(textIssue('a\udc00', 'body')).toBe('surrogate');
    expect(textIssue('\udc00\ud800', 'body')).toBe('surrogate');
    expect(textIssue('tab\tline\nreturn\r', 'body')).toBeUndefined();
    expect(textIssue('emoji 😀 and Київ and 漢字', 'body')).toBeUndefined();
    expect(textIssue('bell \u0007', 'body')).toBeUndefined();
  });

  it('URLs (query strings, path parameters): also refuses C0, DEL and C1 control characters', () => {
    for (const s of ['a\tb', 'a\nb', 'a\u001bb', 'a\u007fb', 'a\u0085b', 'a\u009fb'])
      expect(textIssue(s, 'url')).toBe('control');
    expect(textIssue('a\u0000b', 'url')).toBe('nul');
    expect(textIssue('a\ud800b', 'url')).toBe('surrogate');
    expect(textIssue('my-project_1 😀 é', 'url')).toBeUndefined();
  });
});

describe('findTextProblem', () => {
  it('names the field: nested keys, array indexes, the first problem only', () => {
    expect(findTextProblem({ a: 'ok', b: { c: ['x', 'y\u0000'] } }, 'body', 'body')).toEqual({
      path: 'body/b/c/1',
      message: 'must not contain the NUL character',
    });
    expect(findTextProblem('\ud800', 'body', 'body')).toEqual({
      path: 'body',
      message: 'must be valid Unicode text (it contains an unpaired surrogate)',
    });
    expect(findTextProblem({ name: 'a\u0001' }, 'params', 'url')?.path).toBe('params/name');
    expect(findTextProblem({ n: 1, b: true, z: null, s: 'fine' }, 'body', 'body')).toBeUndefined();
    expect(findTextProblem(undefined, 'body', 'body')).toBeUndefined();
  });

  it('checks keys, and never repeats a key that does not look like a field name', () => {
    expect(findTextProblem({ ok: { 'bad\u0000key': 1 } }, 'body', 'body')).toEqual({
      path: 'body/ok',
      message: 'has a field name containing the NUL character',
    });
    expect(findTextProblem({ 'we ird <key>': 'a\u0000' }, 'body', 'body')?.path).toBe('body/*');
    expect(fieldSegment('display_name')).toBe('display_name');
    expect(fieldSegment('x'.repeat(65))).toBe('*');
    expect(fieldSegment('')).toBe('*');
  });

  it('refuses values nested deeper than the limit instead of recursing', () => {
    let v: unknown = 'leaf';
    for (let i = 0; i < MAX_JSON_DEPTH + 5; i++) v = [v];
    expect(findTextProblem(v, 'body', 'body')?.message).toMatch(/nested more than/);
  });
});

describe('prepareSchema', () => {
  it('gives integers without bounds the int4 bounds, keeps declared bounds', () => {
    const s = prepareSchema(
      Type.Object({ a: Type.Integer(), b: Type.Integer({ minimum: 1, maximum: 9 }), c: Type.Array(Type.Integer()) }),
      false,
    ) as any;
    expect(s.properties.a).toMatchObject({ minimum: INT32_MIN, maximum: INT32_MAX });
    expect(s.properties.b).toMatchObject({ minimum: 1, maximum: 9 });
    expect(s.properties.c.items).toMatchObject({ minimum: INT32_MIN, maximum: INT32_MAX });
    expect(s.additionalProperties).toBeUndefined();
  });

  it('closes body objects that do not say additionalProperties, at every level; leaves records and explicit choices', () => {
    const original = Type.Object({
      inner: Type.Object({ x: Type.String() }),
      list: Type.Array(Type.Object({ y: Type.String() })),
      either: Type.Union([Type.Object({ p: Type.String() }), Type.Null()]),
      open: Type.Object({ z: Type.String() }, { additionalProperties: true }),
      record: Type.Record(Type.String(), Type.String()),
      both: Type.Intersect([Type.Object({ m: Type.String() }), Type.Object({ n: Type.String() })]),
      type: Type.String({ description: 'a field named like a keyword' }),
    });
    const s = prepareSchema(original, true) as any;
    expect(s.additionalProperties).toBe(false);
    expect(s.properties.inner.additionalProperties).toBe(false);
    expect(s.properties.list.items.additionalProperties).toBe(false);
    expect(s.properties.either.anyOf[0].additionalProperties).toBe(false);
    expect(s.properties.open.additionalProperties).toBe(true);
    expect(s.properties.record.additionalProperties).toBeUndefined();
    expect(s.properties.both.allOf[0].additionalProperties).toBeUndefined();
    expect(s.properties.type).toMatchObject({ type: 'string' });
    // The shared original (used by the OpenAPI document) is unchanged.
    expect((original as any).additionalProperties).toBeUndefined();
    expect((original.properties.inner as any).additionalProperties).toBeUndefined();
  });

  it('compiles with the request validator: unknown fields, huge integers and Infinity are refused', () => {
    const ajv = requestAjv(false);
    const validate = ajv.compile(
      prepareSchema(Type.Object({ n: Type.Optional(Type.Integer()), f: Type.Optional(Type.Number()) }), true) as object,
    );
    expect(validate({ n: 5, f: 1.5 })).toBe(true);
    expect(validate({ n: 5, extra: 1 })).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({
      keyword: 'additionalProperties',
      params: { additionalProperty: 'extra' },
    });
    expect(validate({ n: 1e20 })).toBe(false);
    expect(validate({ f: JSON.parse('1e400') })).toBe(false);
  });
});

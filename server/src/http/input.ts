/**
 * Hostile input, refused in one place before any route sees it (`installInputChecks`, called by app.ts).
 *
 * - **JSON depth**: a JSON body nested more than `MAX_JSON_DEPTH` levels is refused on its text, before it is
 *   parsed (recursive code further on — serializers, drivers, this walk — must never meet a 100 000-deep array).
 * - **Text**: every string and every key of the parsed body, the query string and the path parameters is checked.
 *   Everywhere: no NUL (PostgreSQL's text types cannot hold U+0000; jsonb refuses `\u0000`) and no unpaired UTF-16
 *   surrogate (it would be stored as U+FFFD, silently changing the text). In query strings and path parameters
 *   also no control characters (C0, DEL, C1): they name things, and no name of ours contains one. Bodies may
 *   carry tabs and newlines (issue descriptions, wiki pages). A refusal is 400 `invalid_request` with
 *   `details: [{path, message}]`, the path naming the field (`body/title`, `querystring/assignee`, `params/name`).
 * - **The validator** (Ajv) compiles a prepared copy of each request schema: body objects that do not say
 *   `additionalProperties` are closed (an unknown field is a 400 naming it), integers without bounds get the
 *   32-bit bounds of the int4 columns they end in, and NaN/Infinity are not numbers. Query strings, path
 *   parameters and headers arrive as text and are coerced to their schema types; JSON bodies are not.
 *
 * Multipart bodies are read by their routes; their text reaches the database through the safety net of the
 * error handler (errors.ts): PostgreSQL data exceptions (SQLSTATE class 22) answer 400, never 500.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyRouteSchemaDef } from 'fastify/types/schema.js';
import { lazyCompiler } from '../lib/lazy-compile.ts';
import { BadRequest } from './errors.ts';

// ajv-formats is CommonJS with a default export: take the function under either interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

/** How deeply a JSON body may nest arrays and objects (`{"a":[1]}` is 2). */
export const MAX_JSON_DEPTH = 32;
/** The bounds given to integer schemas that declare none (PostgreSQL int4). */
export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;

/** One refused field: `path` is `<part>/<field>/…` (part: body, querystring, params), `message` one phrase. */
export interface InputProblem {
  path: string;
  message: string;
}

/**
 * The nesting depth of JSON text: the deepest run of open `[`/`{` outside strings, without parsing. Stops
 * early and returns a value above `limit` once the text nests deeper than `limit`. Linear in the length;
 * strings are skipped with `indexOf`, so large text bodies cost little. Malformed text gives some number
 * (the parser refuses it afterwards).
 */
export function jsonDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Skip to the closing quote: one preceded by an even number of backslashes.
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j < 0) return max;
        let backslashes = 0;
        for (let k = j - 1; text.charCodeAt(k) === 92; k--) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      i = j;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
    }
  }
  return max;
}

const BODY_SUSPECT = /[\u0000\uD800-\uDFFF]/;
const URL_SUSPECT = /[\u0000-\u001F\u007F-\u009F\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const CONTROL = /[\u0001-\u001F\u007F-\u009F]/;

/** What is wrong with a text: a NUL character, an unpaired surrogate, or (in URLs) a control character. */
export type TextIssue = 'nul' | 'surrogate' | 'control';

/**
 * What is wrong with the text `s`, or undefined when it is acceptable. `where`: 'body' refuses NUL and unpaired
 * surrogates; 'url' (query strings, path parameters) also control characters (U+0001–U+001F, U+007F–U+009F).
 */
export function textIssue(s: string, where: 'body' | 'url'): TextIssue | undefined {
  if (!(where === 'body' ? BODY_SUSPECT : URL_SUSPECT).test(s)) return undefined;
  if (s.includes('\u0000')) return 'nul';
  if (LONE_SURROGATE.test(s)) return 'surrogate';
  if (where === 'url' && CONTROL.test(s)) return 'control';
  return undefined;
}

/** The phrase completing "<field> …" for a refused value, and "<object> …" for a refused key. */
export const TEXT_MESSAGES: Record<TextIssue, { value: string; key: string }> = {
  nul: { value: 'must not contain the NUL character', key: 'has a field name containing the NUL character' },
  surrogate: {
    value: 'must be valid Unicode text (it contains an unpaired surrogate)',
    key: 'has a field name that is not valid Unicode text (an unpaired surrogate)',
  },
  control: { value: 'must not contain control characters', key: 'has a field name containing control characters' },
};

/** A key as it may appear in an answer's path: field-name-like keys as they are, anything else as `*`. */
export const fieldSegment = (key: string): string => (/^[A-Za-z0-9_.-]{1,64}$/.test(key) ? key : '*');

/**
 * The first string or key of a parsed JSON-like value (strings, arrays, plain objects; other values pass)
 * refused by `textIssue`, with its path from `root` (e.g. `body/labels/2`), or undefined. Values nested
 * deeper than `MAX_JSON_DEPTH` are refused as such (the walk is recursive).
 */
export function findTextProblem(
  value: unknown,
  root: string,
  where: 'body' | 'url',
  depth = 0,
): InputProblem | undefined {
  if (typeof value === 'string') {
    const issue = textIssue(value, where);
    return issue ? { path: root, message: TEXT_MESSAGES[issue].value } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= MAX_JSON_DEPTH) return { path: root, message: `is nested more than ${MAX_JSON_DEPTH} levels deep` };
  // A raw upload body (a stream or bytes) passes as it is: only parsed values are walked.
  if (ArrayBuffer.isView(value) || typeof (value as { pipe?: unknown }).pipe === 'function') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findTextProblem(value[i], `${root}/${i}`, where, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const keyIssue = textIssue(key, where);
    if (keyIssue) return { path: root, message: TEXT_MESSAGES[keyIssue].key };
    const found = findTextProblem(
      (value as Record<string, unknown>)[key],
      `${root}/${fieldSegment(key)}`,
      where,
      depth + 1,
    );
    if (found) return found;
  }
  return undefined;
}

/** The first refused text of a request (path parameters, then query string, then body), or undefined. */
export function requestTextProblem(req: Pick<FastifyRequest, 'params' | 'query' | 'body'>): InputProblem | undefined {
  return (
    findTextProblem(req.params, 'params', 'url') ??
    findTextProblem(req.query, 'querystring', 'url') ??
    findTextProblem(req.body, 'body', 'body')
  );
}

/** A 400 `invalid_request` naming one field. */
export const invalidInput = (problem: InputProblem) =>
  new BadRequest('invalid_request', `${problem.path}: ${problem.message}`, { details: [problem] });

type Schema = Record<string, unknown>;
const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Keywords whose value is one subschema, a list of them, or a map of name → subschema (JSON Schema 2020-12). */
const ONE = [
  'items',
  'additionalItems',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'additionalProperties',
];
const LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items'];
const MAP = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas'];

/**
 * A copy of a request schema as the validator compiles it (the original, shared with the OpenAPI document, is
 * not changed): integer schemas without `minimum`/`maximum` get the int4 bounds; with `close`, object schemas
 * with `properties` and no `additionalProperties`, `patternProperties` or `unevaluatedProperties` are closed
 * (`additionalProperties: false`), except the members of an `allOf`, which only together describe the object.
 */
export function prepareSchema(schema: unknown, close: boolean, inAllOf = false): unknown {
  if (!isSchema(schema)) return schema;
  const out: Schema = {};
  for (const key of Object.keys(schema)) {
    const v = schema[key];
    if (LIST.includes(key) && Array.isArray(v)) out[key] = v.map((s) => prepareSchema(s, close, key === 'allOf'));
    else if (ONE.includes(key) && isSchema(v)) out[key] = prepareSchema(v, close);
    else if (MAP.includes(key) && isSchema(v))
      out[key] = Object.fromEntries(Object.entries(v).map(([k, s]) => [k, prepareSchema(s, close)]));
    else out[key] = v;
  }
  const types = Array.isArray(out.type) ? out.type : [out.type];
  if (types.includes('integer')) {
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = INT32_MIN;
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = INT32_MAX;
  }
  if (
    close &&
    !inAllOf &&
    types.includes('object') &&
    isSchema(out.properties) &&
    out.additionalProperties === undefined &&
    out.patternProperties === undefined &&
    out.unevaluatedProperties === undefined
  ) {
    out.additionalProperties = false;
  }
  return out;
}

/**
 * The Ajv instance validating one kind of request part: `coerceTypes: 'array'` for text (query strings, path
 * parameters, headers), `false` for JSON bodies (`{"count":"5"}` for an integer is a 400, not a conversion).
 * Errors carry their schema (`verbose`) so messages can list allowed values and use descriptions.
 */
export function requestAjv(coerceTypes: false | 'array'): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
    // `strict: false` would also let NaN and Infinity (JSON's 1e400) pass as numbers.
    strictNumbers: true,
    verbose: true,
  });
  addFormats(ajv);
  return ajv;
}

/**
 * Install the input checks on the root instance (before the routes): the JSON parser with its depth
 * pre-check, the validator compiler over prepared schemas, and the `preValidation` text check.
 */
export function installInputChecks(app: FastifyInstance): void {
  const body = { ajv: requestAjv(false), cache: new WeakMap<object, ValidateFunction>() };
  const text = { ajv: requestAjv('array'), cache: new WeakMap<object, ValidateFunction>() };
  // Each route's validator is compiled on its first request, not at start (lib/lazy-compile.ts).
  app.setValidatorCompiler(
    lazyCompiler(({ schema, httpPart }: FastifyRouteSchemaDef<any>) => {
      const v = httpPart === 'body' ? body : text;
      let fn = v.cache.get(schema);
      if (!fn) {
        fn = v.ajv.compile(prepareSchema(schema, httpPart === 'body') as object);
        v.cache.set(schema, fn);
      }
      return fn;
    }),
  );

  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, raw, done) => {
    if (jsonDepth(raw as string, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      done(invalidInput({ path: 'body', message: `is nested more than ${MAX_JSON_DEPTH} levels deep` }), undefined);
      return;
    }
    parseJson(req, raw as string, done);
  });

  app.addHook('preValidation', (req, _reply, done) => {
    const problem = requestTextProblem(req);
    done(problem ? invalidInput(problem) : undefined);
  });
}

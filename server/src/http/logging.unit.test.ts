import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import { censorSecrets, loggerOptions, redactUrl, serializeError } from './logging.ts';

function memoryLog() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { log: pino(loggerOptions('trace'), stream), text: () => lines.join('') };
}

/** A database error as pg and PGlite throw it: the statement and its parameters attached. */
const dbError = () =>
  Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
    code: '22021',
    severity: 'ERROR',
    query: 'update "users" set "password_hash" = $1 where "id" = $2',
    params: ['$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$SECRETHASH', 7],
    detail: 'Key (email)=(someone@example.com) already exists.',
  });

describe('serializeError', () => {
  it('keeps type, message, code and stack; drops the statement, its parameters and anything else', () => {
    const out = serializeError(dbError()) as Record<string, unknown>;
    expect(Object.keys(out).sort()).toEqual(['code', 'message', 'stack', 'type']);
    expect(out).toMatchObject({ type: 'DatabaseError', code: '22021' });
    expect(JSON.stringify(out)).not.toMatch(/SECRETHASH|password_hash|someone@example/);
  });

  it('follows causes and keeps values logged under err that are not errors', () => {
    const out = serializeError(new Error('outer', { cause: dbError() })) as any;
    expect(out.cause).toMatchObject({ type: 'DatabaseError', message: expect.any(String) });
    expect(out.cause.params).toBeUndefined();
    expect(serializeError('plain message')).toBe('plain message');
    expect(serializeError(undefined)).toBeUndefined();
  });
});

describe('censorSecrets', () => {
  it('replaces secret-named values at any case and depth up to four, copying only what it changes', () => {
    const input = {
      user: 5,
      body: { Password: 'p1', list: [{ access_token: 't1' }, 'plain'], nested: { a: { llmKey: 'k1' } } },
      untouched: { x: 1 },
    };
    const snapshot = JSON.stringify(input);
    const out = censorSecrets(input);
    expect(out).toEqual({
      user: 5,
      body: {
        Password: '[redacted]',
        list: [{ access_token: '[redacted]' }, 'plain'],
        nested: { a: { llmKey: '[redacted]' } },
      },
      untouched: { x: 1 },
    });
    expect(JSON.stringify(input)).toBe(snapshot);
    expect(out.untouched).toBe(input.untouched);
    const clean = { a: 1, b: { c: [1, 2] } };
    expect(censorSecrets(clean)).toBe(clean);
    const err = Object.assign(new Error('x'), { password: 'left to the err serializer' });
    expect(censorSecrets({ err }).err).toBe(err);
  });
});

describe('loggerOptions', () => {
  it('no secret, token, password, hash or SQL parameter reaches a line', () => {
    const m = memoryLog();
    m.log.error({ err: dbError() }, 'unexpected failure');
    m.log.info({ password: 'Pw-top-1', body: { new_password: 'Pw-nested-2', user: { token: 'tok-deep-3' } } }, 'x');
    m.log.info({ params: ['param-secret-4'], settings: { llm_key: 'sk-ant-5', apiKey: 'key-6' } }, 'y');
    m.log.info({ req: { headers: { authorization: 'Bearer jwt-7', cookie: 'sid=8', 'x-token': 'xt-9' } } }, 'z');
    const text = m.text();
    for (const secret of [
      'SECRETHASH',
      '$argon2',
      'Pw-top-1',
      'Pw-nested-2',
      'tok-deep-3',
      'param-secret-4',
      'sk-ant-5',
      'key-6',
      'jwt-7',
      'sid=8',
      'xt-9',
    ]) {
      expect(text, secret).not.toContain(secret);
    }
    expect(text).toContain('unexpected failure');
    expect(text).toContain('22021');
  });

  it('redactUrl hides the values of token and other secret query parameters', () => {
    expect(redactUrl('/a?token=abc&x=1')).toBe('/a?token=[redacted]&x=1');
    expect(redactUrl('/a?x=1&api_key=k&password=p')).toBe('/a?x=1&api_key=[redacted]&password=[redacted]');
    expect(redactUrl('/a?tokens=1')).toBe('/a?tokens=1');
    const plain = '/api/auth/me';
    expect(redactUrl(plain)).toBe(plain);
  });

  it('censorSecrets answers the same for a key seen before, in any case', () => {
    for (let i = 0; i < 3; i++) {
      expect(censorSecrets({ Password: 'p', method: 'GET', nested: { TOKEN: 't', n: i } })).toEqual({
        Password: '[redacted]',
        method: 'GET',
        nested: { TOKEN: '[redacted]', n: i },
      });
    }
  });
});

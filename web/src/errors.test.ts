import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiFailure } from './api/client';
import { detailField, detailText, ERROR_MESSAGES, errorText } from './errors';

const uk: Record<string, string> = {
  'A project with this technical name already exists; choose another name.': 'Проєкт з такою назвою вже існує.',
  'The request was not accepted: check the fields.': 'Запит не прийнято: перевірте поля.',
  'at most {n} characters': 'щонайбільше {n} символів',
};
const t = (m: string, v?: Record<string, string | number>) =>
  (uk[m] ?? m).replace(/\{(\w+)\}/g, (_a, k: string) => String(v?.[k] ?? `{${k}}`));

describe('error words', () => {
  it('English shows the service sentence; another language the code’s words, else the status’s', () => {
    const taken = new ApiFailure(409, { error: 'project_exists', message: "A project named 'x' already exists." });
    expect(errorText(taken, t, 'en')).toBe("A project named 'x' already exists.");
    expect(errorText(taken, t, 'uk')).toBe('Проєкт з такою назвою вже існує.');
    const odd = new ApiFailure(400, { error: 'something_new', message: 'Something new.' });
    expect(errorText(odd, t, 'uk')).toBe('Запит не прийнято: перевірте поля.');
    expect(errorText(new TypeError('fetch failed'), t, 'uk')).toBe(
      'Something went wrong. Check your connection and try again.',
    );
  });

  it('says validation details per field in the reader’s words', () => {
    expect(detailField('body/title')).toBe('title');
    expect(detailText('must NOT have more than 200 characters', t)).toBe('щонайбільше 200 символів');
    expect(detailText('an unusual rule', t)).toBe('an unusual rule');
  });

  it('every code it has words for is one the service sends', () => {
    const root = path.resolve(import.meta.dirname, '../../server/src');
    const text = fs
      .readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.includes('.test.'))
      .map((f) => fs.readFileSync(path.join(root, f), 'utf8'))
      .join('\n');
    const unknown = Object.keys(ERROR_MESSAGES).filter((code) => !text.includes(`'${code}'`));
    expect(unknown).toEqual([]);
  });
});

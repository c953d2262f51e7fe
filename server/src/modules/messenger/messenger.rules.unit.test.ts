import { describe, expect, it } from 'vitest';
import { choiceButtons, parseCommand, splitMessage } from './messenger.rules.ts';

describe('parseCommand', () => {
  it('reads known commands, with a bot mention and an argument', () => {
    expect(parseCommand('/status')).toEqual({ command: 'status', arg: '' });
    expect(parseCommand('/start AB12CD34')).toEqual({ command: 'start', arg: 'AB12CD34' });
    expect(parseCommand('/issues@crew_dev_bot')).toEqual({ command: 'issues', arg: '' });
  });
  it('leaves other text (and unknown commands) to the worker', () => {
    expect(parseCommand('fix the login page')).toBeUndefined();
    expect(parseCommand('/deploy now')).toBeUndefined();
    expect(parseCommand('status')).toBeUndefined();
  });
});

describe('splitMessage', () => {
  it('keeps a short text whole', () => {
    expect(splitMessage('hello')).toEqual(['hello']);
    expect(splitMessage('')).toEqual(['']);
  });
  it('cuts at paragraph, then line, then space, never over the limit', () => {
    const text = `${'a'.repeat(60)}\n\n${'b'.repeat(30)}\n${'c'.repeat(30)} ${'d'.repeat(30)}`;
    const parts = splitMessage(text, 80);
    expect(parts[0]).toBe('a'.repeat(60));
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(80);
    expect(parts.join('').replace(/\s/g, '')).toBe(text.replace(/\s/g, ''));
  });
  it('cuts hard without a break, keeping surrogate pairs together', () => {
    const text = 'x'.repeat(9) + '😀'.repeat(10);
    const parts = splitMessage(text, 10);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(10);
      expect(p).not.toMatch(/[\ud800-\udbff]$/);
    }
    expect(parts.join('')).toBe(text);
  });
  it('splits a 10,000-character reply into three messages of at most 4096', () => {
    const parts = splitMessage('word '.repeat(2000));
    expect(parts.length).toBe(3);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(4096);
  });
});

describe('choiceButtons', () => {
  it('offers a closing numbered list after a question as buttons', () => {
    expect(choiceButtons('Done with the draft. Which one next?\n1. Tests\n2) Docs\n3. Release notes')).toEqual([
      [{ text: 'Tests', callback_data: 'Tests' }],
      [{ text: 'Docs', callback_data: 'Docs' }],
      [{ text: 'Release notes', callback_data: 'Release notes' }],
    ]);
  });
  it('cuts callback data to 64 bytes on a character boundary', () => {
    const long = 'ї'.repeat(40);
    const [[b]] = choiceButtons(`Pick:\n1. ${long}\n2. other`)!;
    expect(Buffer.byteLength(b.callback_data!)).toBeLessThanOrEqual(64);
    expect(long.startsWith(b.callback_data!)).toBe(true);
  });
  it('offers nothing for a plain list, a single item or too many items', () => {
    expect(choiceButtons('Steps done\n1. a\n2. b')).toBeUndefined();
    expect(choiceButtons('Which?\n1. only')).toBeUndefined();
    expect(choiceButtons(`Which?\n${Array.from({ length: 9 }, (_, i) => `${i + 1}. x`).join('\n')}`)).toBeUndefined();
    expect(choiceButtons('Which?\n1. ok\n2. ok\nthanks')).toBeUndefined();
  });
});

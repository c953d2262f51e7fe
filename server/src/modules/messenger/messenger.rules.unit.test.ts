import { describe, expect, it } from 'vitest';
import {
  approvalCallback,
  approvalOutcome,
  choiceButtons,
  denyReply,
  parseCommand,
  splitMessage,
} from './messenger.rules.ts';

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

describe('approvalCallback', () => {
  it('reads approve:<id> and deny:<id> only', () => {
    expect(approvalCallback('approve:12')).toEqual({ decision: 'approve', id: 12 });
    expect(approvalCallback('deny:7')).toEqual({ decision: 'deny', id: 7 });
    for (const bad of [
      'approve:',
      'approve:0',
      'approve:01',
      'approve:12x',
      'APPROVE:1',
      'ok:1',
      'approve:99999999999',
      ' deny:1',
    ])
      expect(approvalCallback(bad), bad).toBeUndefined();
  });
});

describe('denyReply', () => {
  it('reads "deny: reason", "deny reason" and "deny"; other text is not a denial', () => {
    expect(denyReply('deny: not now')).toBe('not now');
    expect(denyReply('  Deny:  too risky \n')).toBe('too risky');
    expect(denyReply('DENY no')).toBe('no');
    expect(denyReply('deny')).toBe('');
    expect(denyReply('deny: ' + 'x'.repeat(3000))).toHaveLength(2000);
    for (const other of ['denied', 'I deny: it', 'approve', 'denying this'])
      expect(denyReply(other), other).toBeUndefined();
  });
});

describe('approvalOutcome', () => {
  it('says who decided and why', () => {
    expect(approvalOutcome({ status: 'approved', decided_by: 'a@b.c', reason: null })).toBe('Approved by a@b.c.');
    expect(approvalOutcome({ status: 'denied', decided_by: 'a@b.c', reason: 'no' })).toBe('Denied by a@b.c: no');
    expect(approvalOutcome({ status: 'expired', decided_by: 'system', reason: 'late' })).toBe('Expired: late');
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { atomicWrite } from './atomic-write.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'atomic-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('atomicWrite', () => {
  it('creates missing folders, replaces the file whole and leaves no temporary file', async () => {
    const file = path.join(tmp, 'a', 'b', 'f.json');
    await atomicWrite(file, '{"v":1}\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('{"v":1}\n');
    await atomicWrite(file, Buffer.from('second'));
    expect(fs.readFileSync(file, 'utf8')).toBe('second');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['f.json']);
  });

  it('keeps the mode of the file it replaces', async () => {
    const file = path.join(tmp, 'mode.sh');
    fs.writeFileSync(file, 'old');
    fs.chmodSync(file, 0o750);
    await atomicWrite(file, 'new');
    expect(fs.statSync(file).mode & 0o777).toBe(0o750);
  });

  it('lets concurrent writes of one file each land whole, the last one winning', async () => {
    const file = path.join(tmp, 'race.txt');
    await Promise.all(Array.from({ length: 20 }, (_, i) => atomicWrite(file, String(i).repeat(1000))));
    expect(fs.readFileSync(file, 'utf8')).toBe('19'.repeat(1000));
    expect(fs.readdirSync(tmp).filter((f) => f.startsWith('race.txt'))).toEqual(['race.txt']);
  });

  it('fails without leaving anything behind when the folder is a file', async () => {
    fs.writeFileSync(path.join(tmp, 'plain'), 'x');
    await expect(atomicWrite(path.join(tmp, 'plain', 'f.txt'), 'y')).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(fs.readFileSync(path.join(tmp, 'plain'), 'utf8')).toBe('x');
  });
});

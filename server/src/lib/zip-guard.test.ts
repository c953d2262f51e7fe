import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ZipFile } from 'yazl';
import { checkZipExpansion, ZipTooLarge, ZipUnreadable } from './zip-guard.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zip-guard-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const MB = 1024 * 1024;

/** Write a ZIP of `entries` (name → bytes or a number of zero bytes, streamed) to `name` under the temp folder. */
async function makeZip(name: string, entries: Record<string, Buffer | number>): Promise<string> {
  const file = path.join(dir, name);
  const zip = new ZipFile();
  for (const [entry, content] of Object.entries(entries)) {
    if (Buffer.isBuffer(content)) zip.addBuffer(content, entry);
    else {
      let left = content;
      const chunk = Buffer.alloc(MB);
      zip.addReadStream(
        new Readable({
          read() {
            const n = Math.min(left, chunk.length);
            left -= n;
            this.push(n ? chunk.subarray(0, n) : null);
          },
        }),
        entry,
      );
    }
  }
  zip.end();
  await new Promise<void>((resolve, reject) =>
    zip.outputStream.pipe(fs.createWriteStream(file)).on('close', resolve).on('error', reject),
  );
  return file;
}

describe('checkZipExpansion', () => {
  it('passes an ordinary archive and returns its inflated size', async () => {
    const file = await makeZip('ok.zip', { 'a.txt': Buffer.from('hello'), 'dir/b.xml': Buffer.alloc(1000, 'x') });
    expect(await checkZipExpansion(file, { maxBytes: 10 * MB })).toBe(1005);
  });

  it('stops a zip bomb at the limit, without inflating the rest', async () => {
    // 64 MiB of zeros compress to about 64 KiB.
    const file = await makeZip('bomb.zip', { 'word/document.xml': 64 * MB });
    expect(fs.statSync(file).size).toBeLessThan(MB);
    const t0 = performance.now();
    const err = await checkZipExpansion(file, { maxBytes: 8 * MB }).catch((e) => e);
    expect(err).toBeInstanceOf(ZipTooLarge);
    expect(performance.now() - t0).toBeLessThan(5_000);
    // Many entries that each look harmless count together.
    const many = await makeZip('many.zip', Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`p${i}`, MB])));
    await expect(checkZipExpansion(many, { maxBytes: 8 * MB })).rejects.toBeInstanceOf(ZipTooLarge);
    await expect(checkZipExpansion(many, { maxBytes: 100 * MB, maxEntries: 10 })).rejects.toBeInstanceOf(ZipTooLarge);
  });

  it('refuses an entry whose header understates its size, and a file that is no archive', async () => {
    const file = await makeZip('liar.zip', { 'word/document.xml': Buffer.alloc(MB) });
    const bytes = fs.readFileSync(file);
    // The central directory's "uncompressed size" (offset 24 of its record) now claims 1,000 bytes.
    const cd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bytes.writeUInt32LE(1000, cd + 24);
    fs.writeFileSync(file, bytes);
    await expect(checkZipExpansion(file, { maxBytes: 10 * MB })).rejects.toBeInstanceOf(ZipUnreadable);

    const junk = path.join(dir, 'junk.docx');
    fs.writeFileSync(junk, 'not a zip at all');
    await expect(checkZipExpansion(junk, { maxBytes: MB })).rejects.toBeInstanceOf(ZipUnreadable);
  });
});

/**
 * Zip bombs: a small ZIP-based file (DOCX, XLSX, EPUB…) that expands to gigabytes would exhaust the memory of
 * a reader that inflates it whole (mammoth reads a DOCX with JSZip in memory). `checkZipExpansion` reads the
 * archive with yauzl before such a reader sees it. It inflates every entry as a stream, counts the bytes and
 * throws them away. It stops as soon as the total goes over the limit, so the work is bounded by the limit
 * and not by what the archive claims. yauzl also refuses entries whose inflated size differs from the size
 * they declare, so a header that lies about its size is refused as well.
 */
import type { Entry } from 'yauzl';

/** The archive expands beyond the limit (or holds too many entries). */
export class ZipTooLarge extends Error {
  constructor(readonly limitBytes: number) {
    super(`The archive expands to more than ${limitBytes} bytes.`);
    this.name = 'ZipTooLarge';
  }
}

/** The file is not a readable ZIP archive (corrupt, truncated, sizes that do not match their headers). */
export class ZipUnreadable extends Error {
  constructor(readonly detail: string) {
    super('The file is not a readable ZIP archive.');
    this.name = 'ZipUnreadable';
  }
}

/**
 * Inflate every entry of the ZIP archive at `file` (streamed, nothing kept) and check that together they stay
 * within `opts.maxBytes`, with at most `opts.maxEntries` entries.
 * @returns the total inflated size in bytes.
 * @throws ZipTooLarge over either limit (found without inflating past it); ZipUnreadable for anything else.
 */
export async function checkZipExpansion(
  file: string,
  opts: { maxBytes: number; maxEntries?: number },
): Promise<number> {
  const maxEntries = opts.maxEntries ?? 10_000;
  // yauzl at the first archive checked, not at every start.
  const { default: yauzl } = await import('yauzl');
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (err, zip) => {
      if (err || !zip) return reject(new ZipUnreadable(err?.message ?? 'no archive'));
      let total = 0;
      let entries = 0;
      let settled = false;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        zip.close();
        reject(e instanceof ZipTooLarge ? e : new ZipUnreadable(e.message));
      };
      zip.on('error', fail);
      zip.on('end', () => {
        if (settled) return;
        settled = true;
        resolve(total);
      });
      zip.on('entry', (entry: Entry) => {
        if (++entries > maxEntries) return fail(new ZipTooLarge(opts.maxBytes));
        // Declared sizes are checked first (cheap), then the real ones while inflating.
        if (total + entry.uncompressedSize > opts.maxBytes) return fail(new ZipTooLarge(opts.maxBytes));
        if (/\/$/.test(entry.fileName)) return zip.readEntry();
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return fail(e ?? new Error('no stream'));
          stream.on('data', (chunk: Buffer) => {
            total += chunk.length;
            if (total > opts.maxBytes) {
              stream.destroy();
              fail(new ZipTooLarge(opts.maxBytes));
            }
          });
          stream.on('error', fail);
          stream.on('end', () => {
            if (!settled) zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/**
 * The page reader (`PAGE_READER_URL`) fetches a web source's page itself, so the page's URL passes the outbound
 * rules of note sources first: a private, loopback or metadata address never reaches the reader.
 */
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMedia } from '../../lib/media.ts';
import { createSpeech } from '../../providers/speech/index.ts';
import { extractWeb, type ExtractDeps } from './notes.extract.ts';

let reader: http.Server;
let readerUrl: string;
const asked: string[] = [];

beforeAll(async () => {
  reader = http.createServer((req, res) => {
    asked.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('The page, as the reader read it.');
  });
  await new Promise<void>((r) => reader.listen(0, '127.0.0.1', r));
  readerUrl = `http://127.0.0.1:${(reader.address() as AddressInfo).port}`;
});
afterAll(() => {
  reader.closeAllConnections();
  reader.close();
});

const deps = (allow: string[] = []): ExtractDeps => ({
  media: createMedia(),
  speech: createSpeech({ speechUrl: undefined, speechModel: 'm', speechKey: undefined }),
  allow,
  pageReaderUrl: readerUrl,
  youtubeBaseUrl: 'https://www.youtube.com',
  transcriptApiUrl: undefined,
  ytDlpPath: 'yt-dlp',
  tmpDir: os.tmpdir(),
  describeImage: async () => '',
  progress: async () => {},
});

describe('the page reader gets only URLs the outbound rules allow', () => {
  it('refuses private, loopback, link-local and non-http addresses before asking the reader', async () => {
    for (const url of [
      'http://10.0.0.5:6379/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://127.0.0.1:8080/admin',
      'http://[::1]/',
      'http://localhost/',
      'file:///etc/passwd',
      'gopher://example.com/',
    ]) {
      const err = await extractWeb(url, deps()).catch((e: Error) => e);
      expect(err, url).toBeInstanceOf(Error);
      expect((err as Error).message, url).toMatch(/^Fetching the page refused/);
    }
    expect(asked).toEqual([]);
  });

  it('passes an allowed address to the reader', async () => {
    const r = await extractWeb('http://intranet.test/handbook', deps(['intranet.test']));
    expect(r.text).toBe('The page, as the reader read it.');
    expect(asked).toEqual(['/http://intranet.test/handbook']);
  });
});

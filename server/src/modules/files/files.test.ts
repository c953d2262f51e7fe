import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import http from 'node:http';
import { execFileSync, spawn } from 'node:child_process';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { loadConfig } from '../../config.ts';
import { CLONE_TIMEOUT_MS, UPLOAD_LIMIT_BYTES } from './files.service.ts';

// The real defaults; this file's app lowers them through the configuration.
const defaults = loadConfig({}).files;

let t: TestApp;
let owner: Awaited<ReturnType<typeof createUser>>;
let other: Awaited<ReturnType<typeof createUser>>;
let proj: Awaited<ReturnType<typeof createProject>>;
let outsideDir: string;
let gitRoot: string;
let gitServer: http.Server;
let gitPort: number;
let hang: net.Server;
let hangPort: number;
/** A listener on 127.0.0.2 (not in OUTBOUND_ALLOW_PRIVATE): a redirect target that must never be connected to. */
let trap: net.Server;
let trapPort: number;
let trapped = 0;

beforeAll(async () => {
  t = await buildTestApp({
    env: {
      FILES_UPLOAD_LIMIT_BYTES: '4096',
      FILES_CLONE_TIMEOUT_MS: '3000',
      OUTBOUND_ALLOW_PRIVATE: '127.0.0.1',
      // every attempt counts against the clone limit, refused ones too; this file makes more than 10
      RATE_LIMIT_CLONES: '100/10m',
    },
  });
  owner = await createUser(t);
  other = await createUser(t);
  proj = await createProject(t, owner.id, 'files');
  outsideDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outside-'));
  fs.writeFileSync(path.join(outsideDir, 'secret.txt'), 'top secret');
  // a git repository served over HTTP, and a redirect into a private address
  gitRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'gitroot-'));
  const work = path.join(gitRoot, 'work');
  const git = (...a: string[]) =>
    execFileSync('git', a, {
      cwd: work,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@e',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@e',
      },
    });
  fs.mkdirSync(work);
  git('init', '-q');
  fs.writeFileSync(path.join(work, 'README.md'), 'hello from git\n');
  git('add', '.');
  git('commit', '-qm', 'first');
  execFileSync('git', ['clone', '-q', '--bare', work, path.join(gitRoot, 'demo.git')]);
  trap = net.createServer((sock) => {
    trapped++;
    sock.destroy();
  });
  await new Promise<void>((r) => trap.listen(0, '127.0.0.2', r));
  trapPort = (trap.address() as net.AddressInfo).port;
  // git's smart HTTP protocol (a shallow clone needs it) through `git http-backend`, run as CGI per request.
  gitServer = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/moved/'))
      return res.writeHead(302, { location: `http://127.0.0.2:${trapPort}/${url.pathname.slice(7)}` }).end();
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: gitRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let sent = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (sent) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const [k, ...v] = line.split(':');
        if (k.toLowerCase() === 'status') status = Number(v.join(':').trim().split(' ')[0]);
        else headers[k] = v.join(':').trim();
      }
      sent = true;
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => (sent ? res.end() : res.writeHead(500).end()));
  });
  await new Promise<void>((r) => gitServer.listen(0, '127.0.0.1', r));
  gitPort = (gitServer.address() as net.AddressInfo).port;
  // a server that accepts connections and never answers (clone timeout)
  hang = net.createServer(() => {}).listen(0, '127.0.0.1');
  await new Promise((r) => hang.once('listening', r));
  hangPort = (hang.address() as net.AddressInfo).port;
});
afterAll(async () => {
  gitServer?.closeAllConnections();
  gitServer?.close();
  trap?.close();
  hang?.close();
  await t?.close();
  fs.rmSync(outsideDir, { recursive: true, force: true });
  fs.rmSync(gitRoot, { recursive: true, force: true });
});

const u = (p: string) => `/api/crm/projects/files/files${p}`;
const get = (p: string, token = owner.token) => api(t.app, 'GET', u(p), { token });

function multipart(parts: { name: string; filename?: string; content: string | Buffer }[]) {
  const boundary = `----testboundary${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}\r\n${p.filename ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n`,
      ),
    );
    chunks.push(Buffer.isBuffer(p.content) ? p.content : Buffer.from(p.content));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
const upload = (parts: Parameters<typeof multipart>[0], token = owner.token) => {
  const m = multipart(parts);
  return api(t.app, 'POST', u('/upload'), { token, payload: m.payload, headers: m.headers });
};

describe('files access', () => {
  it('401 without a token, 403 on another user’s project, 400 for missing fields', async () => {
    expect((await api(t.app, 'GET', u(''))).status).toBe(401);
    expect((await api(t.app, 'POST', u('/upload'))).status).toBe(401);
    expect((await get('', other.token)).status).toBe(403);
    expect(
      (await api(t.app, 'PUT', u('/save'), { token: other.token, body: { path: 'a', content: 'b' } })).status,
    ).toBe(403);
    expect((await upload([{ name: 'file', filename: 'a.txt', content: 'x' }], other.token)).status).toBe(403);
    expect((await get('/read')).status).toBe(400);
    expect((await api(t.app, 'PUT', u('/save'), { token: owner.token, body: { path: 'a' } })).status).toBe(400);
    expect((await api(t.app, 'POST', u('/clone'), { token: owner.token, body: {} })).status).toBe(400);
  });
});

describe('path confinement', () => {
  it('refuses ../, encoded %2e%2e%2f, absolute paths and symlinks that leave the project (403 path_outside_project)', async () => {
    const attempts = [
      () => get('/read?path=../../etc/passwd'),
      () => get('/read?path=%2e%2e%2f%2e%2e%2fetc%2fpasswd'),
      () => get('/read?path=a/%2E%2E/%2E%2E/x'),
      () => get('?path=..'),
      () => get('/read?path=/etc/passwd'),
      () => get(`/read?path=${encodeURIComponent(`${outsideDir}/secret.txt`)}`),
      () => api(t.app, 'PUT', u('/save'), { token: owner.token, body: { path: '../escape.txt', content: 'x' } }),
      () => api(t.app, 'POST', u('/mkdir'), { token: owner.token, body: { path: '/tmp/evil' } }),
      () => api(t.app, 'DELETE', u('/delete?path=..%2F..%2F'), { token: owner.token }),
    ];
    for (const a of attempts) {
      const r = await a();
      expect(r.status, JSON.stringify(r.body)).toBe(403);
      expect(r.body.error).toBe('path_outside_project');
    }
    fs.symlinkSync(outsideDir, path.join(proj.dir, 'link-out'));
    fs.symlinkSync(path.join(outsideDir, 'nothing-yet.txt'), path.join(proj.dir, 'dangling-out'));
    for (const r of [
      await get('/read?path=link-out/secret.txt'),
      await get('?path=link-out'),
      await api(t.app, 'PUT', u('/save'), { token: owner.token, body: { path: 'link-out/new.txt', content: 'x' } }),
      await api(t.app, 'PUT', u('/save'), { token: owner.token, body: { path: 'dangling-out', content: 'x' } }),
      await api(t.app, 'DELETE', u('/delete?path=link-out/secret.txt'), { token: owner.token }),
      await upload([
        { name: 'path', content: 'link-out' },
        { name: 'file', filename: 'x.txt', content: 'x' },
      ]),
    ]) {
      expect(r.status, JSON.stringify(r.body)).toBe(403);
    }
    expect(fs.existsSync(path.join(outsideDir, 'new.txt'))).toBe(false);
    expect(fs.existsSync(path.join(outsideDir, 'nothing-yet.txt'))).toBe(false);
    expect(fs.existsSync(path.join(outsideDir, 'x.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(outsideDir, 'secret.txt'), 'utf8')).toBe('top secret');
    // a symlink that stays inside is fine
    fs.mkdirSync(path.join(proj.dir, 'real'));
    fs.writeFileSync(path.join(proj.dir, 'real', 'in.txt'), 'inside');
    fs.symlinkSync(path.join(proj.dir, 'real'), path.join(proj.dir, 'link-in'));
    expect((await get('/read?path=link-in/in.txt')).body.content).toBe('inside');
  });
});

describe('files', () => {
  it('save, read (json and raw), list, mkdir, create, delete', async () => {
    const s = await api(t.app, 'PUT', u('/save'), {
      token: owner.token,
      body: { path: 'src/app/main.ts', content: 'console.log(1);\n' },
    });
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ ok: true, path: 'src/app/main.ts', size: 16 });
    const r = await get('/read?path=src/app/main.ts');
    expect(r.body).toMatchObject({ path: 'src/app/main.ts', content: 'console.log(1);\n', encoding: 'utf8', size: 16 });
    fs.writeFileSync(path.join(proj.dir, 'bin.dat'), Buffer.from([0, 1, 2, 255]));
    const b = await get('/read?path=bin.dat');
    expect(b.body.encoding).toBe('base64');
    expect(Buffer.from(b.body.content, 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));
    const raw = await t.app.inject({
      method: 'GET',
      url: u('/read?path=bin.dat&raw=1'),
      headers: { authorization: `Bearer ${owner.token}` },
    });
    expect(raw.headers['content-type'], raw.body).toBe('application/octet-stream');
    expect(raw.rawPayload).toEqual(Buffer.from([0, 1, 2, 255]));
    expect((await api(t.app, 'POST', u('/mkdir'), { token: owner.token, body: { path: 'docs/notes' } })).status).toBe(
      201,
    );
    expect((await api(t.app, 'POST', u('/mkdir'), { token: owner.token, body: { path: 'docs/notes' } })).status).toBe(
      409,
    );
    expect(
      (await api(t.app, 'POST', u('/create'), { token: owner.token, body: { path: 'docs/notes/todo.md' } })).status,
    ).toBe(201);
    expect(
      (await api(t.app, 'POST', u('/create'), { token: owner.token, body: { path: 'docs/notes/todo.md' } })).status,
    ).toBe(409);
    const l = await get('?path=docs/notes');
    expect(l.body.entries).toMatchObject([{ name: 'todo.md', path: 'docs/notes/todo.md', type: 'file', size: 0 }]);
    const root = await get('');
    expect(root.body.entries.filter((e: any) => e.type === 'dir').map((e: any) => e.name)).toEqual(
      expect.arrayContaining(['docs', 'src']),
    );
    expect((await get('/read?path=docs')).body.error).toBe('is_directory');
    expect((await get('/read?path=missing.txt')).status).toBe(404);
    expect((await api(t.app, 'DELETE', u('/delete?path=docs'), { token: owner.token })).status).toBe(200);
    expect(fs.existsSync(path.join(proj.dir, 'docs'))).toBe(false);
    expect((await api(t.app, 'DELETE', u('/delete?path=docs'), { token: owner.token })).status).toBe(404);
    expect((await api(t.app, 'DELETE', u('/delete?path='), { token: owner.token })).body.error).toBe(
      'cannot_delete_root',
    );
  });

  it('uploads into a folder; over the limit answers 413 and leaves nothing; the real limit is 100 MB', async () => {
    expect(defaults.uploadLimitBytes).toBe(100 * 1024 * 1024);
    expect(UPLOAD_LIMIT_BYTES).toBe(100 * 1024 * 1024);
    const ok = await upload([
      { name: 'path', content: 'uploads' },
      { name: 'file', filename: 'a.bin', content: Buffer.alloc(4096, 7) },
    ]);
    expect(ok.status).toBe(201);
    expect(ok.body.files).toEqual([{ path: 'uploads/a.bin', size: 4096 }]);
    expect(fs.readFileSync(path.join(proj.dir, 'uploads', 'a.bin')).length).toBe(4096);
    const big = await upload([
      { name: 'path', content: 'uploads' },
      { name: 'file', filename: 'big.bin', content: Buffer.alloc(4097, 7) },
    ]);
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('payload_too_large');
    expect(fs.existsSync(path.join(proj.dir, 'uploads', 'big.bin'))).toBe(false);
    expect(fs.readdirSync(path.join(proj.dir, '.crm')).filter((n) => n.startsWith('upload-'))).toEqual([]);
    expect((await upload([{ name: 'path', content: 'x' }])).body.error).toBe('file_required');
    const trav = await upload([{ name: 'file', filename: '../../evil.txt', content: 'x' }]);
    expect(trav.status).toBe(201);
    expect(trav.body.files[0].path).toBe('evil.txt');
  });

  it('clones http(s) repositories only, under the outbound rules, within the time limit (60 s by default)', async () => {
    expect(defaults.cloneTimeoutMs).toBe(60_000);
    expect(CLONE_TIMEOUT_MS).toBe(60_000);
    for (const url of [
      'file:///etc',
      'ssh://host/x.git',
      `git://127.0.0.1:${gitPort}/demo.git`,
      '--upload-pack=touch /tmp/pwn',
      'ext::sh -c touch% /tmp/pwn',
      'not a url',
    ]) {
      const r = await api(t.app, 'POST', u('/clone'), { token: owner.token, body: { url } });
      expect(r.status, url).toBe(400);
      expect(r.body.error).toBe('invalid_url');
    }
    // Private, loopback, link-local and metadata addresses (not in OUTBOUND_ALLOW_PRIVATE) are refused before any
    // connection (names resolving to one as well: lib/safe-fetch.test.ts): no port scanner.
    for (const url of [
      'http://10.0.0.5:6379/x',
      'http://169.254.169.254/latest/meta-data/',
      `http://127.0.0.2:${trapPort}/demo.git`,
      `http://[::1]:${gitPort}/demo.git`,
    ]) {
      const r = await api(t.app, 'POST', u('/clone'), { token: owner.token, body: { url, dir: 'x' } });
      expect(r.status, url).toBe(400);
      expect(r.body.error, url).toBe('url_not_allowed');
    }
    const c = await api(t.app, 'POST', u('/clone'), {
      token: owner.token,
      body: { url: `http://127.0.0.1:${gitPort}/demo.git` },
    });
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    expect(c.body.path).toBe('demo');
    expect(fs.readFileSync(path.join(proj.dir, 'demo', 'README.md'), 'utf8')).toBe('hello from git\n');
    expect(
      (
        await api(t.app, 'POST', u('/clone'), {
          token: owner.token,
          body: { url: `http://127.0.0.1:${gitPort}/demo.git` },
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await api(t.app, 'POST', u('/clone'), {
          token: owner.token,
          body: { url: `http://127.0.0.1:${gitPort}/demo.git`, dir: '../out' },
        })
      ).status,
    ).toBe(403);
    // A redirect into a private address is not followed; the answer says nothing of what git saw.
    const moved = await api(t.app, 'POST', u('/clone'), {
      token: owner.token,
      body: { url: `http://127.0.0.1:${gitPort}/moved/demo.git`, dir: 'moved' },
    });
    expect(moved.status).toBe(502);
    expect(moved.body).toEqual({ error: 'clone_failed', message: 'git could not clone the repository.' });
    expect(trapped).toBe(0);
    const missing = await api(t.app, 'POST', u('/clone'), {
      token: owner.token,
      body: { url: `http://127.0.0.1:${gitPort}/missing.git`, dir: 'm' },
    });
    expect(missing.status).toBe(502);
    expect(missing.body).toEqual({ error: 'clone_failed', message: 'git could not clone the repository.' });
    expect(fs.existsSync(path.join(proj.dir, 'm'))).toBe(false);
    const slow = await api(t.app, 'POST', u('/clone'), {
      token: owner.token,
      body: { url: `http://127.0.0.1:${hangPort}/x.git`, dir: 'slow' },
    });
    expect(slow.status).toBe(504);
    expect(slow.body.error).toBe('clone_timeout');
    expect(fs.existsSync(path.join(proj.dir, 'slow'))).toBe(false);
  });
});

import { execFileSync } from 'node:child_process';
import zlib from 'node:zlib';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCliPackage } from './cli.package.ts';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';

let t: TestApp;
let owner: Awaited<ReturnType<typeof createUser>>;
let other: Awaited<ReturnType<typeof createUser>>;
let proj: Awaited<ReturnType<typeof createProject>>;
let workerId: number;

beforeAll(async () => {
  t = await buildTestApp({ env: { CLI_LINK_POLL_MS: '30', CLI_LINK_TIMEOUT_MS: '1500' } });
  owner = await createUser(t);
  other = await createUser(t);
  proj = await createProject(t, owner.id, 'clip');
  const w = await t.db
    .insertInto('workers')
    .values({ project_id: proj.id, label: 'Coder', role: 'developer' })
    .returning('id')
    .executeTakeFirstOrThrow();
  workerId = w.id;
});
afterAll(async () => {
  await t?.close();
});

const V = (v: string) => ({ 'x-arc-version': v });
const gz = (text: string) => zlib.gzipSync(Buffer.from(text)).toString('base64');
const beat = (token: string, device: string, headers: Record<string, string> = V('1.0.16')) =>
  api(t.app, 'POST', '/api/cli/heartbeat', {
    token,
    headers,
    body: {
      device_id: device,
      hostname: `host-${device}`,
      platform: 'linux',
      version: headers['x-arc-version'] ?? '1.0.16',
      project: 'clip',
    },
  });

describe('devices and CLI status', () => {
  it('401 without a token on every CLI route but the download route', async () => {
    for (const [m, u] of [
      ['POST', '/api/cli/heartbeat'],
      ['GET', '/api/crm/cli/devices'],
      ['GET', '/api/crm/onboarding/cli-status'],
      ['GET', '/api/crm/projects/clip/cli-sessions'],
      ['POST', '/api/cli/session-end/clip/coder'],
      ['POST', '/api/cli/transcript/clip/coder'],
      ['GET', '/api/cli/transcripts/clip'],
      ['GET', '/api/cli/transcript/clip/s1'],
      ['GET', '/api/crm/projects/clip/cli-transcript?session=s1'],
      ['GET', '/api/cli/init/clip/coder'],
      ['POST', '/api/crm/cli/link/confirm'],
      ['GET', '/api/sse/cli-status'],
    ] as const)
      expect((await api(t.app, m, u, { body: m === 'POST' ? {} : undefined })).status, `${m} ${u}`).toBe(401);
  });

  it('an untouched user is not installed; the first heartbeat records one cli_invocation and installs', async () => {
    const u = await createUser(t);
    expect((await api(t.app, 'GET', '/api/crm/onboarding/cli-status', { token: u.token })).body).toEqual({
      installed: false,
      last_cli_at: null,
    });
    expect((await beat(u.token, 'dev-a')).body).toEqual({ ok: true, recorded: true });
    expect((await beat(u.token, 'dev-a')).status).toBe(200);
    expect((await beat(u.token, 'dev-b')).status).toBe(200);
    const events = await t.db.selectFrom('activity_log').selectAll().where('user_id', '=', u.id).execute();
    expect(events.filter((e) => e.type === 'cli_invocation')).toHaveLength(1);
    const s = (await api(t.app, 'GET', '/api/crm/onboarding/cli-status', { token: u.token })).body;
    expect(s.installed).toBe(true);
    expect(Date.parse(s.last_cli_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('a check-in older than 30 days no longer counts as installed', async () => {
    const u = await createUser(t);
    await beat(u.token, 'old');
    await t.db
      .updateTable('cli_devices')
      .set({ last_seen: new Date(Date.now() - 31 * 24 * 3600 * 1000) })
      .where('user_id', '=', u.id)
      .execute();
    expect((await api(t.app, 'GET', '/api/crm/onboarding/cli-status', { token: u.token })).body.installed).toBe(false);
  });

  it('a CLI older than 1.0.14 is answered but not recorded', async () => {
    const u = await createUser(t);
    expect((await beat(u.token, 'x', V('1.0.13'))).body).toEqual({ ok: true, recorded: false });
    expect((await api(t.app, 'GET', '/api/crm/cli/devices', { token: u.token })).body.devices).toEqual([]);
  });

  it('lists at most 20 devices, newest first, only the caller’s', async () => {
    const u = await createUser(t);
    for (let i = 0; i < 22; i++) await beat(u.token, `d${i}`);
    // The embedded database's clock counts milliseconds: two beats in the same one are equally new (then ordered by
    // device id), so the newest beat comes once the clock has moved on.
    await new Promise((r) => setTimeout(r, 5));
    await beat(u.token, 'd3');
    const list = (await api(t.app, 'GET', '/api/crm/cli/devices', { token: u.token })).body.devices;
    expect(list).toHaveLength(20);
    expect(list[0]).toMatchObject({
      device_id: 'd3',
      hostname: 'host-d3',
      platform: 'linux',
      arc_version: '1.0.16',
      last_project: 'clip',
    });
    expect(Object.keys(list[0]).sort()).toEqual(
      [
        'arc_version',
        'credential',
        'device_id',
        'first_seen',
        'hostname',
        'last_project',
        'last_seen',
        'platform',
      ].sort(),
    );
    expect((await api(t.app, 'GET', '/api/crm/cli/devices', { token: other.token })).body.devices).toEqual([]);
  });
});

describe('session summaries', () => {
  it('writes a session-end event with the first prompt collapsed and cut to 280; lists newest first with a limit', async () => {
    const long = `  fix   the\n\nlogin   ${'x'.repeat(400)}`;
    const r = await api(t.app, 'POST', '/api/cli/session-end/clip/coder', {
      token: owner.token,
      headers: V('1.0.16'),
      body: {
        duration_ms: 65_000,
        first_prompt: long,
        issue_id: 3,
        issue_title: 'Login',
        session_id: 'sess-1',
        message_count: 12,
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.event.metadata.first_prompt).toHaveLength(280);
    expect(r.body.event.metadata.first_prompt.startsWith('fix the login xxx')).toBe(true);
    await api(t.app, 'POST', '/api/cli/session-end/clip/nobody', {
      token: owner.token,
      body: { duration_ms: 5, session_id: 'sess-2' },
    });
    const s = await api(t.app, 'GET', '/api/crm/projects/clip/cli-sessions', { token: owner.token });
    expect(s.status).toBe(200);
    expect(s.body.events).toHaveLength(2);
    expect(s.body.events[0]).toMatchObject({ worker_id: null, duration: 5, metadata: { session_id: 'sess-2' } });
    expect(s.body.events[1]).toMatchObject({
      worker_id: workerId,
      duration: 65_000,
      metadata: { issue_id: 3, issue_title: 'Login', session_id: 'sess-1', message_count: 12 },
    });
    expect(typeof s.body.events[1].label).toBe('string');
    expect(Date.parse(s.body.events[1].timestamp)).not.toBeNaN();
    const one = await api(t.app, 'GET', '/api/crm/projects/clip/cli-sessions?limit=1', { token: owner.token });
    expect(one.body.events).toHaveLength(1);
    expect(
      (await api(t.app, 'GET', '/api/crm/projects/clip/cli-sessions?limit=501', { token: owner.token })).status,
    ).toBe(400);
    expect((await api(t.app, 'GET', '/api/crm/projects/clip/cli-sessions', { token: other.token })).status).toBe(403);
  });

  it('keeps only the duration from a CLI older than 1.0.15', async () => {
    const r = await api(t.app, 'POST', '/api/cli/session-end/clip/coder', {
      token: owner.token,
      headers: V('1.0.14'),
      body: { duration_ms: 10, first_prompt: 'secret plan', session_id: 'old-1' },
    });
    expect(r.status).toBe(200);
    expect(r.body.event.metadata).toEqual({ mode: 'coder', duration_ms: 10 });
  });
});

describe('transcripts', () => {
  const jsonl = [
    JSON.stringify({ role: 'user', content: 'Please fix the login', ts: '2026-11-20T10:00:00Z' }),
    JSON.stringify({
      type: 'assistant',
      timestamp: '2026-11-20T10:00:03Z',
      message: { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    }),
  ].join('\n');
  const upload = (body: object, token = owner.token, headers = V('1.0.16')) =>
    api(t.app, 'POST', '/api/cli/transcript/clip/coder', { token, headers, body });

  it('upserts per (owner, session), lists, downloads the jsonl and shows the messages', async () => {
    const a = await upload({
      session_id: 'sess-1',
      gzip_b64: gz('{"role":"user","content":"first"}'),
      first_prompt: 'first',
    });
    expect(a.status).toBe(200);
    const b = await upload({
      session_id: 'sess-1',
      gzip_b64: gz(jsonl),
      first_prompt: '  Please   fix the login ',
      message_count: 2,
    });
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({
      ok: true,
      session_id: 'sess-1',
      worker_id: workerId,
      size_bytes: Buffer.byteLength(jsonl),
    });
    const list = await api(t.app, 'GET', '/api/cli/transcripts/clip', { token: owner.token });
    expect(list.body.transcripts).toEqual([
      {
        session_id: 'sess-1',
        worker_id: workerId,
        message_count: 2,
        first_prompt: 'Please fix the login',
        size_bytes: Buffer.byteLength(jsonl),
        updated_at: expect.any(String),
      },
    ]);
    const dl = await api(t.app, 'GET', '/api/cli/transcript/clip/sess-1', { token: owner.token });
    expect(dl.status).toBe(200);
    expect(dl.body.jsonl).toBe(jsonl);
    const view = await api(t.app, 'GET', '/api/crm/projects/clip/cli-transcript?session=sess-1', {
      token: owner.token,
    });
    expect(view.body.messages).toEqual([
      { role: 'user', text: 'Please fix the login', ts: '2026-11-20T10:00:00.000Z' },
      { role: 'assistant', text: 'Done.', ts: '2026-11-20T10:00:03.000Z' },
    ]);
    const s = await api(t.app, 'GET', '/api/crm/projects/clip/cli-sessions', { token: owner.token });
    expect(s.body.transcriptSessionIds).toEqual(['sess-1']);
  });

  it('404 for a missing transcript or one that is not the caller’s (an admin sees only their own)', async () => {
    const admin = await createUser(t, { role: 'admin' });
    expect((await api(t.app, 'GET', '/api/cli/transcript/clip/sess-1', { token: admin.token })).status).toBe(404);
    const v = await api(t.app, 'GET', '/api/crm/projects/clip/cli-transcript?session=nope', { token: owner.token });
    expect(v.status).toBe(404);
    expect(v.body.error).toBe('transcript_not_found');
    expect((await api(t.app, 'GET', '/api/cli/transcript/clip/sess-1', { token: other.token })).status).toBe(403);
    expect((await api(t.app, 'GET', '/api/cli/transcripts/clip', { token: admin.token })).body.transcripts).toEqual([]);
  });

  it('413 over 4 MB compressed; a gzip bomb is refused without a record; junk is 400', async () => {
    const random = (await import('node:crypto')).randomBytes(4 * 1024 * 1024 + 100);
    const big = await upload({ session_id: 'big', gzip_b64: zlib.gzipSync(random, { level: 0 }).toString('base64') });
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('transcript_too_large');
    const bomb = zlib.gzipSync(Buffer.alloc(40 * 1024 * 1024)).toString('base64');
    const r = await upload({ session_id: 'bomb', gzip_b64: bomb });
    expect(r.status).toBe(413);
    expect(r.body.message).not.toContain(bomb.slice(0, 20));
    const junk = await upload({ session_id: 'junk', gzip_b64: Buffer.from('hello world, plain').toString('base64') });
    expect(junk.status).toBe(400);
    expect(junk.body.error).toBe('invalid_transcript');
    expect((await upload({ session_id: '../etc', gzip_b64: gz('x') })).status).toBe(400);
    const rows = await t.db.selectFrom('cli_transcripts').select('session_id').execute();
    expect(rows.map((x) => x.session_id)).not.toEqual(expect.arrayContaining(['big', 'bomb', 'junk']));
  });

  it('426 for a CLI older than 1.0.16', async () => {
    const r = await upload({ session_id: 'v', gzip_b64: gz('x') }, owner.token, V('1.0.15'));
    expect(r.status).toBe(426);
    expect(r.body.error).toBe('cli_upgrade_required');
  });
});

describe('download route', () => {
  it('is public, writes a cli_download event, and refuses unknown platforms', async () => {
    const r = await api(t.app, 'GET', '/api/cli/download/linux');
    expect(r.status).toBe(200);
    expect(r.body.platform).toBe('linux');
    const withToken = await api(t.app, 'GET', '/api/cli/download/macos', { token: other.token });
    expect(withToken.status).toBe(200);
    const ev = await t.db
      .selectFrom('activity_log')
      .select(['user_id', 'payload'])
      .where('type', '=', 'cli_download')
      .execute();
    expect(ev).toEqual(
      expect.arrayContaining([
        { user_id: null, payload: { platform: 'linux' } },
        { user_id: other.id, payload: { platform: 'macos' } },
      ]),
    );
    expect((await api(t.app, 'GET', '/api/cli/download/amiga')).status).toBe(400);
  });

  it('shows the install steps without recording a download; a download records one', async () => {
    const downloads = async () =>
      (await t.db.selectFrom('activity_log').select('id').where('type', '=', 'cli_download').execute()).length;
    const before = await downloads();
    const steps = await api(t.app, 'GET', '/api/cli/install/linux', { token: other.token });
    expect(steps.status).toBe(200);
    expect((await api(t.app, 'GET', '/api/cli/install/windows')).status).toBe(200);
    expect(await downloads()).toBe(before);
    const got = await api(t.app, 'GET', '/api/cli/download/linux', { token: other.token });
    expect(got.body).toEqual(steps.body);
    expect(await downloads()).toBe(before + 1);
    expect((await api(t.app, 'GET', '/api/cli/install/amiga')).status).toBe(400);
  });

  it('names the package this service serves, and that tarball installs a working arc', async () => {
    const version = JSON.parse(fs.readFileSync(path.resolve('cli/package.json'), 'utf8')).version;
    const r = await api(t.app, 'GET', '/api/cli/download/windows');
    expect(r.body).toMatchObject({ version, url: 'http://app.test/api/cli/arc.tgz' });
    expect(r.body.install).toEqual([
      'npm install -g http://app.test/api/cli/arc.tgz',
      'arc login --server http://app.test',
    ]);

    const res = await t.app.inject({ method: 'GET', url: '/api/cli/arc.tgz' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="arc-${version}.tgz"`);
    // The same bytes on every request (and on every instance of the same checkout).
    expect((await t.app.inject({ method: 'GET', url: '/api/cli/arc.tgz' })).rawPayload.equals(res.rawPayload)).toBe(
      true,
    );

    // npm's layout: everything under package/, the manifest, the command and its sources; no tests.
    const dir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'arc-pkg-'));
    try {
      const tgz = path.join(dir, 'arc.tgz');
      fs.writeFileSync(tgz, res.rawPayload);
      const names: string[] = [];
      await tar.t({ file: tgz, onReadEntry: (e) => void names.push(e.path) });
      expect(names).toEqual(
        expect.arrayContaining(['package/package.json', 'package/bin/arc.js', 'package/src/main.js']),
      );
      expect(names.every((n) => n.startsWith('package/') && !n.includes('/test/'))).toBe(true);
      await tar.x({ file: tgz, cwd: dir });
      // Its four dependencies come from the registry at install time; here, from this checkout's node_modules.
      fs.symlinkSync(path.resolve('node_modules'), path.join(dir, 'package', 'node_modules'));
      const out = execFileSync(process.execPath, [path.join(dir, 'package', 'bin', 'arc.js'), '--version'], {
        encoding: 'utf8',
      });
      expect(out.trim()).toBe(version);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the package', () => {
  it('an installation without the cli folder answers 503 cli_package_unavailable, not a broken file', async () => {
    const missing = createCliPackage(path.resolve('.tmp', 'no-such-cli-folder'));
    expect(() => missing.manifest()).toThrow(
      expect.objectContaining({ statusCode: 503, code: 'cli_package_unavailable' }),
    );
    await expect(missing.tarball()).rejects.toMatchObject({ statusCode: 503, code: 'cli_package_unavailable' });
  });
});

describe('device link', () => {
  const stream = (token: string) =>
    t.app.inject({ method: 'GET', url: `/api/sse/cli-status?token=${encodeURIComponent(token)}` });

  it('a confirmed code hands the CLI a working token once through the link stream', async () => {
    const u = await createUser(t);
    const link = await api(t.app, 'POST', '/api/cli/link');
    expect(link.status).toBe(201);
    expect(link.body.url).toBe(`http://app.test/cli/link?code=${link.body.code}`);
    const pending = stream(link.body.link_token);
    await new Promise((r) => setTimeout(r, 100));
    expect(
      (
        await api(t.app, 'POST', '/api/crm/cli/link/confirm', {
          token: u.token,
          body: { code: link.body.code.toLowerCase() },
        })
      ).body,
    ).toEqual({ ok: true });
    const res = await pending;
    expect(res.headers['content-type']).toContain('text/event-stream');
    const m = /event: linked\ndata: (.*)\n/.exec(res.body);
    expect(m).not.toBeNull();
    const data = JSON.parse(m![1]);
    expect(data.linked).toBe(true);
    expect(data.user.id).toBe(u.id);
    const me = await api(t.app, 'GET', '/api/auth/me', { token: data.token });
    expect(me.body.id).toBe(u.id);
    // The CLI login counts for the status; a second stream and a second confirmation are refused.
    expect((await api(t.app, 'GET', '/api/crm/onboarding/cli-status', { token: u.token })).body.installed).toBe(true);
    expect((await stream(link.body.link_token)).statusCode).toBe(409);
    const again = await api(t.app, 'POST', '/api/crm/cli/link/confirm', {
      token: other.token,
      body: { code: link.body.code },
    });
    expect(again.status).toBe(409);
  });

  it('unknown and expired codes, forged link tokens', async () => {
    expect(
      (await api(t.app, 'POST', '/api/crm/cli/link/confirm', { token: owner.token, body: { code: 'ZZZZ-ZZZZ' } }))
        .status,
    ).toBe(404);
    const link = await api(t.app, 'POST', '/api/cli/link');
    await t.db
      .updateTable('cli_links')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('code', '=', link.body.code)
      .execute();
    const r = await api(t.app, 'POST', '/api/crm/cli/link/confirm', {
      token: owner.token,
      body: { code: link.body.code },
    });
    expect(r.status).toBe(410);
    expect(r.body.error).toBe('link_expired');
    const s = await stream(link.body.link_token);
    expect(s.body).toContain('event: end\ndata: {"reason":"expired"}');
    expect((await stream('arcl_forged')).statusCode).toBe(401);
    expect((await stream('not-a-jwt')).statusCode).toBe(401);
    // The stored row holds only the hash of the link token.
    const row = await t.db
      .selectFrom('cli_links')
      .selectAll()
      .where('code', '=', link.body.code)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(link.body.link_token);
  });

  it('with a user token: linked as soon as the CLI checks in; end {reason:timeout} when it never does', async () => {
    const u = await createUser(t);
    const start = Date.now();
    const idle = await stream(u.token);
    expect(Date.now() - start).toBeGreaterThanOrEqual(1400);
    expect(idle.body).toContain('event: end\ndata: {"reason":"timeout"}');
    expect(idle.body).not.toContain('event: linked');
    const pending = stream(u.token);
    await new Promise((r) => setTimeout(r, 100));
    await beat(u.token, 'web-wait');
    const res = await pending;
    expect(res.body).toContain('event: linked\ndata: {"linked":true}');
  });
});

describe('arc init context', () => {
  it('assembles rules, the manifest (≤ 8000) before the skills list, and context_assets skills (≤ 3000)', async () => {
    await t.db.updateTable('projects').set({ protocol: 'Always write tests.' }).where('id', '=', proj.id).execute();
    fs.writeFileSync(path.join(proj.dir, 'MANIFEST.md'), `# Manifest\n${'m'.repeat(9000)}`);
    const sk = await api(t.app, 'POST', '/api/crm/projects/clip/skills', {
      token: owner.token,
      body: { name: 'deploy', description: 'How to deploy', content: `D${'d'.repeat(4000)}` },
    });
    expect(sk.status).toBeLessThan(300);
    await t.db
      .updateTable('workers')
      .set({ context_assets: JSON.stringify(['deploy', 'missing']) })
      .where('id', '=', workerId)
      .execute();
    const r = await api(t.app, 'GET', '/api/cli/init/clip/Coder', { token: owner.token });
    expect(r.status).toBe(200);
    const c: string = r.body.context;
    const rules = c.indexOf('# Project rules');
    const manifest = c.indexOf('# Project manifest');
    const skills = c.indexOf('# Skills');
    expect(rules).toBeGreaterThan(-1);
    expect(manifest).toBeGreaterThan(rules);
    expect(skills).toBeGreaterThan(manifest);
    expect(c.slice(manifest, skills)).toHaveLength('# Project manifest\n'.length + 8000 + 2);
    expect(r.body.autoloaded).toEqual([{ name: 'deploy', content: `D${'d'.repeat(2999)}` }]);
    expect(r.body.skills).toEqual(expect.arrayContaining([{ name: 'deploy', description: 'How to deploy' }]));
    expect((await api(t.app, 'GET', '/api/cli/init/clip/nobody', { token: owner.token })).status).toBe(404);
  });
});

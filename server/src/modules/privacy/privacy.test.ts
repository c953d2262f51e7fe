import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  buildTestApp,
  createProject,
  createUser,
  IMAGES,
  multipartBody,
  type TestApp,
} from '../../../test/helpers.ts';
import { waitForIndex } from '../../../test/knowledge-helpers.ts';
import { createWorker, waitFor } from '../../../test/runtime-fixtures.ts';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

const MARK = 'quokkamarker';
const DAY = 86_400_000;

/** Every file under a directory (recursively). */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(p) : [p];
  });
}

/**
 * A user with data in every area reachable from them: a project (directory file, icon), a worker (avatar),
 * issues, wiki, pins, learnings, project and global skills (indexed), messages and runs (one queued job),
 * activity, usage, trial, reservations, auth events, tokens, signups, invites, waitlist, outbox, settings
 * with a sealed key, onboarding, help history, active role and issue binding, templates, an export.
 */
async function populate(u: Awaited<ReturnType<typeof createUser>>) {
  const p = await createProject(t, u.id);
  const base = `/api/crm/projects/${p.name}`;
  const opts = { token: u.token };
  fs.writeFileSync(path.join(p.dir, 'notes.md'), `secret ${MARK} file`);
  await t.deps.storage.put(`project-icons/${p.id}.png`, IMAGES.png);
  const w = await createWorker(t, p.id, { label: `${MARK}-worker`, system_prompt: MARK });
  await t.deps.storage.put(`worker-avatars/${w.id}.png`, IMAGES.png);
  await t.db
    .updateTable('workers')
    .set({ avatar_key: `worker-avatars/${w.id}.png` })
    .where('id', '=', w.id)
    .execute();

  expect((await api(t.app, 'POST', `${base}/issues`, { ...opts, body: { title: `issue ${MARK}` } })).status).toBe(201);
  expect(
    (await api(t.app, 'PUT', `${base}/wiki/save`, { ...opts, body: { path: 'a.md', content: `# Page\n${MARK}` } }))
      .status,
  ).toBeLessThan(300);
  expect((await api(t.app, 'POST', `${base}/pins`, { ...opts, body: { text: `pin ${MARK}` } })).status).toBeLessThan(
    300,
  );
  expect(
    (await api(t.app, 'POST', `${base}/learnings`, { ...opts, body: { text: `learned ${MARK}` } })).status,
  ).toBeLessThan(300);
  const skillBody = (name: string) => ({ name, description: `about ${MARK}`, content: `how to ${MARK} well` });
  expect((await api(t.app, 'POST', `${base}/skills`, { ...opts, body: skillBody(`ps-${u.id}`) })).status).toBeLessThan(
    300,
  );
  const g = await api(t.app, 'POST', '/api/crm/skills', { ...opts, body: skillBody(`gs-${u.id}`) });
  expect(g.status).toBeLessThan(300);
  expect(fs.existsSync(path.join(t.dataDir, 'skills', `gs-${u.id}`))).toBe(true);
  expect(
    (await api(t.app, 'POST', '/api/crm/onboarding/event', { ...opts, body: { step: 'cli', status: 'completed' } }))
      .status,
  ).toBe(200);
  await api(t.app, 'POST', `${base}/active-issue`, { ...opts, body: { issue_id: 1, title: MARK } });

  const msg = await t.db
    .insertInto('chat_messages')
    .values({ project_id: p.id, user_id: u.id, worker_id: w.id, role: 'user', content: `hello ${MARK}` })
    .returning('id')
    .executeTakeFirstOrThrow();
  const run = await t.db
    .insertInto('agent_runs')
    .values({
      project_id: p.id,
      user_id: u.id,
      worker_id: w.id,
      message_id: msg.id,
      status: 'queued',
      // A tool call's kept result lives with its run (runtime/tool-result.ts): erased with it.
      tool_calls: JSON.stringify([
        {
          turn: 1,
          tool: 'read_file',
          is_error: false,
          summary: '{"path":"notes.md"}',
          result: { preview: `read ${MARK}`, bytes: 40, truncated: false, json: false },
        },
      ]),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await t.deps.jobs.send('runtime.run', { run_id: run.id }, { startAfter: new Date(Date.now() + 3_600_000) });
  await t.db.insertInto('chat_active_roles').values({ project_id: p.id, user_id: u.id, worker_id: w.id }).execute();
  await t.deps.activity.record({ type: 'note', userId: u.id, actor: u.email, projectId: p.id, title: MARK });
  await t.deps.activity.record({ type: 'wizard_metric', userId: u.id, actor: u.email, payload: { m: MARK } });
  await t.db
    .insertInto('token_usage')
    .values({ user_id: u.id, project_id: p.id, project_name: p.name, total_tokens: 5 })
    .execute();
  await t.db.insertInto('trials').values({ user_id: u.id, project_id: p.id, tokens_granted: 100 }).execute();
  await t.db
    .insertInto('token_reservations')
    .values({ user_id: u.id, project_id: p.id, key_source: 'own', tokens: 1, expires_at: new Date(Date.now() + DAY) })
    .execute();
  await t.db.insertInto('auth_events').values({ user_id: u.id, type: 'login', ip: '203.0.113.9' }).execute();
  await t.db
    .insertInto('email_tokens')
    .values({ user_id: u.id, kind: 'verify', token_hash: `h-${u.id}`, expires_at: new Date(Date.now() + DAY) })
    .execute();
  await t.db.insertInto('signups').values({ ip: '203.0.113.9', user_id: u.id }).execute();
  await t.db
    .insertInto('invites')
    .values({ code: `inv-${u.id}`, used_by: u.id, note: `for ${u.email}` })
    .execute();
  await t.db.insertInto('beta_waitlist').values({ email: u.email.toUpperCase(), message: MARK }).execute();
  await t.db
    .insertInto('outbox')
    .values({ to_addr: u.email, subject: MARK, text_body: MARK, headers: '{}', kind: 'verify', status: 'kept' })
    .execute();
  await t.db
    .insertInto('account_settings')
    .values({ user_id: u.id, llm_key_enc: t.deps.sealer.seal(`sk-${MARK}`) })
    .execute();
  await t.db
    .insertInto('help_messages')
    .values({ user_id: u.id, role: 'user', text: `help ${MARK}` })
    .execute();
  await t.db.insertInto('help_usage').values({ user_id: u.id, day: '2026-01-01', used: 1 }).execute();
  await t.db.insertInto('worker_templates').values({ owner_id: u.id, name: MARK }).execute();

  // A research note with an uploaded source (its file under DATA_DIR/notes, its text indexed).
  const note = await api(t.app, 'POST', `${base}/notes`, { ...opts, body: { title: `note ${MARK}` } });
  expect(note.status).toBe(201);
  const mp = multipartBody([{ name: 'file', value: `source text ${MARK}`, filename: 'finding.txt' }]);
  const src = await api(t.app, 'POST', `${base}/notes/${note.body.id}/sources`, {
    ...opts,
    payload: mp.payload,
    headers: mp.headers,
  });
  expect(src.status).toBe(201);
  await waitFor(async () => {
    const n = await api(t.app, 'GET', `${base}/notes/${note.body.id}`, opts);
    return n.body.sources?.[0]?.status === 'done';
  });
  // A finished meeting transcript with its recording and work files under DATA_DIR/transcripts.
  const tr = await t.db
    .insertInto('transcripts')
    .values({
      project_id: p.id,
      user_id: u.id,
      job_id: `job-${u.id}`,
      filename: 'meeting.wav',
      mime: 'audio/wav',
      kind: 'audio',
      size_bytes: 10,
      status: 'done',
      transcript_text: `said ${MARK}`,
      source_file: `incoming/rec-${u.id}.wav`,
      pending: false,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const troot = path.join(t.dataDir, 'transcripts');
  fs.mkdirSync(path.join(troot, 'incoming'), { recursive: true });
  fs.writeFileSync(path.join(troot, 'incoming', `rec-${u.id}.wav`), `audio ${MARK}`);
  fs.mkdirSync(path.join(troot, 'work', String(tr.id)), { recursive: true });
  fs.writeFileSync(path.join(troot, 'work', String(tr.id), 'transcript.txt'), `said ${MARK}`);
  return { p, w, runId: run.id, globalSkillId: g.body.id as number };
}

describe('account erasure', () => {
  it('needs the exact confirmation', async () => {
    const u = await createUser(t);
    for (const body of [{ confirm: 'delete my account' }, { confirm: 'DELETE MY ACCOUNT ' }, { confirm: '' }]) {
      const r = await api(t.app, 'DELETE', '/api/auth/account', { token: u.token, body });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('confirmation_required');
    }
    expect((await api(t.app, 'DELETE', '/api/auth/account', { token: u.token, body: {} })).status).toBe(400);
    expect((await api(t.app, 'DELETE', '/api/auth/account', { body: { confirm: 'DELETE MY ACCOUNT' } })).status).toBe(
      401,
    );
    expect(await t.db.selectFrom('users').select('id').where('id', '=', u.id).executeTakeFirst()).toBeDefined();
  });

  it('leaves nothing of the user in any table, under DATA_DIR, in queued jobs or in another user’s search', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    const q = await createProject(t, other.id);
    await createWorker(t, q.id);
    const { p, w, runId } = await populate(u);
    // The user acts in another project too (as an admin would): that event stays, without their name.
    await t.deps.activity.record({ type: 'issue_log', userId: u.id, actor: u.email, projectId: q.id, title: 'x' });
    await waitForIndex(t.deps);

    const search = () =>
      api(t.app, 'GET', `/api/crm/projects/${q.name}/rag/search?q=${MARK}&include_global=true&k=25`, {
        token: other.token,
      });
    const before = await search();
    expect(before.status).toBe(200);
    expect(JSON.stringify(before.body.hits)).toContain(MARK); // the global skill is visible to everyone
    expect((await api(t.app, 'GET', '/api/auth/export', { token: u.token })).status).toBe(200);

    const r = await api(t.app, 'DELETE', '/api/auth/account', {
      token: u.token,
      body: { confirm: 'DELETE MY ACCOUNT' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, email: u.email, message: expect.any(String) });

    // Every table of the database, listed from the catalog (a new table cannot be forgotten).
    const tables = (
      await sql<{ name: string }>`
        select table_name as name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(t.db)
    ).rows.map((x) => x.name);
    expect(tables.length).toBeGreaterThan(30);
    const leftovers: string[] = [];
    for (const name of tables) {
      const text = await sql<{ n: number }>`
        select count(*)::int as n from ${sql.table(name)} x
        where strpos(lower(row_to_json(x)::text), ${MARK}) > 0
           or strpos(lower(row_to_json(x)::text), ${u.email.toLowerCase()}) > 0`.execute(t.db);
      if (Number(text.rows[0].n)) leftovers.push(`${name}: text`);
      const cols = (
        await sql<{ c: string }>`
          select column_name as c from information_schema.columns
          where table_schema = 'public' and table_name = ${name}
            and data_type in ('integer', 'bigint')
            and column_name in ('user_id', 'owner_id', 'used_by', 'created_by', 'project_id', 'owner_project', 'worker_id')`.execute(
          t.db,
        )
      ).rows.map((x) => x.c);
      for (const c of cols) {
        const id = ['project_id', 'owner_project'].includes(c) ? p.id : c === 'worker_id' ? w.id : u.id;
        const n = await sql<{
          n: number;
        }>`select count(*)::int as n from ${sql.table(name)} where ${sql.ref(c)} = ${id}`.execute(t.db);
        if (Number(n.rows[0].n)) leftovers.push(`${name}.${c}`);
      }
    }
    expect(leftovers).toEqual([]);
    expect(await t.db.selectFrom('users').select('id').where('id', '=', u.id).executeTakeFirst()).toBeUndefined();
    // The event kept in the other project names no one.
    const kept = await t.db
      .selectFrom('activity_log')
      .selectAll()
      .where('project_id', '=', q.id)
      .where('type', '=', 'issue_log')
      .execute();
    expect(kept).toMatchObject([{ actor: '[deleted]', user_id: null }]);

    // No queued job of the erased runs.
    const queued = await sql<{ n: number }>`
      select count(*)::int as n from pgboss.job
      where name = 'runtime.run' and state in ('created', 'retry') and data->>'run_id' = ${String(runId)}`.execute(
      t.db,
    );
    expect(Number(queued.rows[0].n)).toBe(0);

    // Nothing under DATA_DIR: the project directory, icons, avatars, the global skill's folder.
    expect(fs.existsSync(p.dir)).toBe(false);
    expect(fs.existsSync(t.deps.storage.pathOf(`project-icons/${p.id}.png`))).toBe(false);
    expect(fs.existsSync(t.deps.storage.pathOf(`worker-avatars/${w.id}.png`))).toBe(false);
    expect(fs.existsSync(path.join(t.dataDir, 'skills', `gs-${u.id}`))).toBe(false);
    expect(fs.existsSync(path.join(t.dataDir, 'transcripts', 'incoming', `rec-${u.id}.wav`))).toBe(false);
    expect(fs.existsSync(path.join(t.dataDir, 'notes', String(p.id)))).toBe(false);
    for (const f of filesUnder(t.dataDir)) expect(fs.readFileSync(f, 'latin1')).not.toContain(MARK);
    // The other user's project is untouched.
    expect(fs.existsSync(q.dir)).toBe(true);

    // Another user's search never returns the erased text.
    await waitForIndex(t.deps);
    const after = await search();
    expect(after.status).toBe(200);
    expect(JSON.stringify(after.body.hits)).not.toContain(MARK);

    // The old token no longer works, and a second erasure finds no one.
    expect((await api(t.app, 'GET', '/api/auth/me', { token: u.token })).status).toBe(401);
  });
});

describe('data export', () => {
  it('downloads every section of a populated account, never a secret, 3 times per 24 hours', async () => {
    const u = await createUser(t);
    const other = await createUser(t);
    const o = await createProject(t, other.id);
    await t.db
      .insertInto('chat_messages')
      .values({ project_id: o.id, user_id: other.id, role: 'user', content: 'not yours' })
      .execute();
    const { p } = await populate(u);
    await waitFor(async () => (await t.deps.jobs.pending('knowledge.index')) === 0);

    const r = await api(t.app, 'GET', '/api/auth/export', { token: u.token });
    expect(r.status).toBe(200);
    expect(r.headers['content-disposition']).toMatch(/^attachment; filename="crm-export-\d{4}-\d{2}-\d{2}\.json"$/);
    const doc = JSON.parse(r.text);
    for (const k of [
      'profile',
      'account_settings',
      'projects',
      'auth_events',
      'token_usage',
      'arc_help_history',
      'export_history',
      'onboarding',
      'published_skills',
      'worker_templates',
    ])
      expect(doc).toHaveProperty(k);
    expect(Object.keys(doc).slice(2, 5)).toEqual(['profile', 'account_settings', 'projects']);
    expect(doc.profile).toMatchObject({ id: u.id, email: u.email });
    expect(doc.account_settings).toMatchObject({ llm_key_set: true });
    expect(doc.projects).toHaveLength(1);
    const proj = doc.projects[0];
    expect(proj).toMatchObject({ id: p.id, name: p.name });
    expect(proj.messages.map((m: any) => m.content)).toEqual([`hello ${MARK}`]);
    expect(proj.issues[0]).toMatchObject({ title: `issue ${MARK}`, activity: expect.any(Array) });
    expect(proj.issues[0].activity.length).toBeGreaterThan(0);
    expect(proj.activity.some((e: any) => e.title === MARK)).toBe(true);
    expect(proj.wiki[0].content).toContain(MARK);
    expect(proj.pins.pins[0].text).toContain(MARK);
    expect(proj.workers[0].system_prompt).toBe(MARK);
    expect(doc.auth_events).toMatchObject([{ type: 'login' }]);
    expect(doc.token_usage).toMatchObject([{ project_name: p.name, total_tokens: 5 }]);
    expect(doc.arc_help_history).toMatchObject([{ text: `help ${MARK}` }]);
    expect(doc.export_history).toHaveLength(1);
    // Never a password hash, a key (sealed or not), a token hash or another user's data.
    expect(r.text).not.toMatch(/password|\$argon|\$2[aby]\$|llm_key_enc|token_hash|messenger_token/);
    expect(r.text).not.toContain(`sk-${MARK}`);
    expect(r.text).not.toContain('not yours');
    expect(r.text).not.toContain(other.email);

    expect((await api(t.app, 'GET', '/api/auth/export', { token: u.token })).status).toBe(200);
    expect((await api(t.app, 'GET', '/api/auth/export', { token: u.token })).status).toBe(200);
    const fourth = await api(t.app, 'GET', '/api/auth/export', { token: u.token });
    expect(fourth.status).toBe(429);
    expect(fourth.body).toMatchObject({ error: 'export_limit', limit: 3, retry_at: expect.any(String) });
    // Older exports do not count: a day later the user may export again.
    await t.db
      .updateTable('export_history')
      .set({ created_at: new Date(Date.now() - DAY - 1000) })
      .where('user_id', '=', u.id)
      .execute();
    const again = await api(t.app, 'GET', '/api/auth/export', { token: u.token });
    expect(again.status).toBe(200);
    expect(JSON.parse(again.text).export_history).toHaveLength(4);
    expect((await api(t.app, 'GET', '/api/auth/export')).status).toBe(401);
  });

  it('lets parallel requests through only up to the limit', async () => {
    const u = await createUser(t);
    const rs = await Promise.all(
      Array.from({ length: 6 }, () => api(t.app, 'GET', '/api/auth/export', { token: u.token })),
    );
    expect(rs.map((x) => x.status).sort()).toEqual([200, 200, 200, 429, 429, 429]);
  });
});

describe('retention', () => {
  it("checks every hour through pg-boss's schedule; the check claims and queues the day's purge", async () => {
    const scheduled = await sql<{ cron: string; timezone: string }>`
      select cron, timezone from pgboss.schedule where name = 'privacy.retention_check'`.execute(t.db);
    expect(scheduled.rows).toEqual([{ cron: '0 * * * *', timezone: 'UTC' }]);
    const today = new Date().toISOString().slice(0, 10);
    const finishedToday = async () =>
      (await t.db.selectFrom('retention_runs').select('finished_at').where('day', '=', today).executeTakeFirst())
        ?.finished_at
        ? true
        : false;
    // The check at start claimed today; forget that, and the scheduled job claims and runs it again.
    await waitFor(finishedToday);
    await t.db.deleteFrom('retention_runs').where('day', '=', today).execute();
    await t.deps.jobs.send('privacy.retention_check', {});
    await waitFor(finishedToday);
  });

  it('purges back-dated rows past each retention, keeps newer ones, and is claimed once a day', async () => {
    // The purge queued at start has run (or runs now) before rows are back-dated.
    await waitFor(async () =>
      (await t.db.selectFrom('retention_runs').select('finished_at').executeTakeFirst())?.finished_at ? true : false,
    );
    const u = await createUser(t);
    const p = await createProject(t, u.id);
    const ago = (days: number) => new Date(Date.now() - days * DAY);
    const msg = (days: number) =>
      t.db
        .insertInto('chat_messages')
        .values({ project_id: p.id, user_id: u.id, role: 'user', content: `m${days}`, created_at: ago(days) })
        .execute();
    await msg(181);
    await msg(179);
    for (const [type, days] of [
      ['old', 366],
      ['new', 364],
    ] as const)
      await t.db
        .insertInto('activity_log')
        .values({ type, project_id: p.id, created_at: ago(days) })
        .execute();
    for (const [type, days] of [
      ['old', 91],
      ['new', 89],
    ] as const)
      await t.db
        .insertInto('auth_events')
        .values({ user_id: u.id, type, created_at: ago(days) })
        .execute();
    for (const days of [731, 729])
      await t.db
        .insertInto('token_usage')
        .values({ user_id: u.id, total_tokens: days, created_at: ago(days) })
        .execute();
    for (const days of [366, 364])
      await t.db
        .insertInto('export_history')
        .values({ user_id: u.id, created_at: ago(days) })
        .execute();

    const day = '2030-01-01';
    expect(await t.services.privacy.scheduleRetention(new Date(`${day}T05:00:00Z`))).toBe(true);
    expect(await t.services.privacy.scheduleRetention(new Date(`${day}T23:00:00Z`))).toBe(false);
    // The queued job runs the purge once and records what it deleted.
    const run = await waitFor(() =>
      t.db
        .selectFrom('retention_runs')
        .selectAll()
        .where('day', '=', day)
        .where('finished_at', 'is not', null)
        .executeTakeFirst(),
    );
    expect(run.deleted).toEqual({
      chat_messages: 1,
      activity_log: 1,
      auth_events: 1,
      token_usage: 1,
      export_history: 1,
    });
    expect(
      await sql<{
        n: number;
      }>`select count(*)::int as n from pgboss.job where name = 'privacy.retention' and data->>'day' = ${day}`
        .execute(t.db)
        .then((x) => Number(x.rows[0].n)),
    ).toBe(1);

    const contents = await t.db.selectFrom('chat_messages').select('content').where('project_id', '=', p.id).execute();
    expect(contents.map((m) => m.content)).toEqual(['m179']);
    expect(
      (await t.db.selectFrom('activity_log').select('type').where('project_id', '=', p.id).execute()).map(
        (x) => x.type,
      ),
    ).toEqual(['new']);
    expect(
      (await t.db.selectFrom('auth_events').select('type').where('user_id', '=', u.id).execute()).map((x) => x.type),
    ).toEqual(['new']);
    expect(
      (await t.db.selectFrom('token_usage').select('total_tokens').where('user_id', '=', u.id).execute()).map(
        (x) => x.total_tokens,
      ),
    ).toEqual([729]);
    expect(await t.db.selectFrom('export_history').select('id').where('user_id', '=', u.id).execute()).toHaveLength(1);
  });

  it('deletes in batches until nothing is left', async () => {
    const u = await createUser(t);
    const rows = Array.from({ length: 25 }, () => ({
      user_id: u.id,
      type: 'b',
      created_at: new Date(Date.now() - 100 * DAY),
    }));
    await t.db.insertInto('auth_events').values(rows).execute();
    const { purgeOlderThan } = await import('../../db/privacy-sql.ts');
    expect(await purgeOlderThan(t.db, 'auth_events', 'created_at', new Date(Date.now() - 90 * DAY), 10)).toBe(25);
    expect(await t.db.selectFrom('auth_events').select('id').where('user_id', '=', u.id).execute()).toHaveLength(0);
  });
});

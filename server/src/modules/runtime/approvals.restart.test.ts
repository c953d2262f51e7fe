/**
 * Approvals across a restart (docs/ARCHITECTURE.md, Approvals): a run waits for a person, the service stops (its
 * app and database closed, as a restart does), a new service starts on the same database and DATA_DIR, the owner
 * approves there, and the call runs exactly once and the run finishes. On the embedded database (its files in
 * DATA_DIR) and on PostgreSQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase, type Database } from '../../db/database.ts';
import { api, appOverDatabase, createProject, createServerDatabase, createUser } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { createWorker, giveKey, waitRun } from '../../../test/runtime-fixtures.ts';

const onPostgres = inject('dbKind') === 'postgres';
let s: Awaited<ReturnType<typeof startLlmStandIn>>;
const cleanup: Array<() => Promise<void>> = [];

beforeAll(async () => {
  s = await startLlmStandIn();
});
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
  await s?.close();
});

/** The database of the service: the embedded one in `dataDir` (first from the migrated template), or a server one. */
async function open(dataDir: string, url: string | undefined, first: boolean): Promise<Database> {
  if (url) return openDatabase({ url, dataDir, poolSize: 5 });
  if (!first) return openDatabase({ url: undefined, dataDir });
  const blob = new Blob([fs.readFileSync(inject('template'))]);
  return openDatabase({ url: undefined, dataDir, loadDataDir: blob });
}

/** The app over `database` and `dataDir`, as `npm start` builds it. */
const appOn = (dataDir: string, database: Database) =>
  appOverDatabase(dataDir, database, { env: { LLM_BASE_URL: s.anthropicUrl } });

describe('approvals across a restart', () => {
  it('a run waiting before the restart is approved on the new service; the call runs once and the run ends', async () => {
    const dataDir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'approvals-restart-'));
    cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    let url: string | undefined;
    if (onPostgres) {
      const server = await createServerDatabase();
      url = server.url;
      cleanup.push(server.drop);
    }
    const first = await appOn(dataDir, await open(dataDir, url, true));
    let closed = false;
    cleanup.push(async () => {
      if (!closed) await first.close();
    });
    const u = await createUser(first, { plan: 'free' });
    const p = await createProject(first, u.id);
    await giveKey(first, u.id);
    const w = await createWorker(first, p.id, { label: 'Dev', tools: ['issues'] });
    await first.db
      .updateTable('workers')
      .set({ approvals: JSON.stringify([{ tool: 'create_issue', mode: 'always' }]) })
      .where('id', '=', w.id)
      .execute();
    s.enqueue(
      { content: [{ type: 'tool_use', name: 'create_issue', input: { title: 'Survives' } }] },
      { content: [{ type: 'text', text: 'Filed after the restart.' }] },
    );
    const before = s.modelCalls().length;
    const m = await api(first.app, 'POST', `/api/crm/projects/${p.name}/message`, {
      token: u.token,
      body: { worker_id: w.id, text: 'File it' },
    });
    expect(m.status).toBe(202);
    const runId = m.body.run_ids[0] as number;
    expect((await waitRun(first, p.name, runId, u.token)).status).toBe('waiting_approval');
    expect(s.modelCalls().length - before).toBe(1);

    // The restart: the first service goes away entirely; a new one opens the same database and DATA_DIR.
    await first.close();
    closed = true;
    const second = await appOn(dataDir, await open(dataDir, url, false));
    cleanup.push(() => second.close());
    // Still waiting on the new service: the restart neither resumed nor failed it.
    await new Promise((r) => setTimeout(r, 500));
    const still = await api(second.app, 'GET', `/api/crm/projects/${p.name}/runs/${runId}`, { token: u.token });
    expect(still.body.status).toBe('waiting_approval');
    expect(s.modelCalls().length - before).toBe(1);
    const pending = await api(second.app, 'GET', `/api/crm/projects/${p.name}/approvals?status=pending`, {
      token: u.token,
    });
    expect(pending.body.approvals).toHaveLength(1);
    const a = pending.body.approvals[0];
    expect(a).toMatchObject({ run_id: runId, tool: 'create_issue', input: { title: 'Survives' } });

    const d = await api(second.app, 'POST', `/api/crm/projects/${p.name}/approvals/${a.id}`, {
      token: u.token,
      body: { decision: 'approve' },
    });
    expect(d.status).toBe(200);
    const done = await waitRun(second, p.name, runId, u.token);
    expect(done.status).toBe('succeeded');
    expect(done.reply).toContain('Filed after the restart.');
    expect(s.modelCalls().length - before).toBe(2);
    const issues = await second.db.selectFrom('issues').select('title').where('project_id', '=', p.id).execute();
    expect(issues).toEqual([{ title: 'Survives' }]);
    const again = await api(second.app, 'POST', `/api/crm/projects/${p.name}/approvals/${a.id}`, {
      token: u.token,
      body: { decision: 'approve' },
    });
    expect(again.status).toBe(409);
    // Two services started on one database and DATA_DIR: 5-8 s on a quiet machine, more than the default 30 s limit
    // on a loaded one.
  }, 90_000);
});

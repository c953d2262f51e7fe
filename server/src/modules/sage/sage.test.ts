/**
 * Marketplace scouting through the HTTP API: categories, scout ranking by the semantic index, quick scan
 * (no model) and analysis (model) of a project, install, a skill's review and benchmark (metered, kept, listed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { giveKey } from '../../../test/runtime-fixtures.ts';

let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
let t: TestApp;
let owner: Awaited<ReturnType<typeof createUser>>;
let project: { id: number; name: string };

const reply = (text: string, input = 100, output = 20) => ({
  content: [{ type: 'text' as const, text }],
  usage: { input_tokens: input, output_tokens: output },
});

beforeAll(async () => {
  llm = await startLlmStandIn({
    responder: (req) => {
      const system = JSON.stringify(req.body.system ?? '');
      if (system.includes('You grade'))
        return reply(
          '{"follows_skill": 5, "correctness": 4, "completeness": 4, "clarity": 4, "comment": "Follows the format."}',
        );
      if (system.includes('You review skills'))
        return reply(
          '```json\n{"clarity": {"score": 4, "notes": "Clear steps."}, "scope": {"score": 5, "notes": "One task."}, "risks": ["May approve what it did not run."], "summary": "A sound checklist."}\n```',
        );
      if (system.includes('You advise'))
        return reply(
          JSON.stringify({
            summary: 'Testing is the main gap.',
            findings: [
              { skill_id: 'catalog:test-writing', gap: 'Flaky tests block releases.', worker: 'QA' },
              { skill_id: 'catalog:made-up', gap: 'not in the catalog', worker: null },
              { skill_id: 'catalog:security-review', gap: 'The search box may be injectable.', worker: 'Ghost' },
            ],
          }),
        );
      return reply('Title: Profile save fails with emoji\nSteps: …\nPriority: P1 (data loss for some users).');
    },
  });
  t = await buildTestApp({ env: { LLM_BASE_URL: llm.anthropicUrl } });
  owner = await createUser(t);
  await giveKey(t, owner.id);
  project = await createProject(t, owner.id);
  for (const title of [
    'Flaky login test fails one run in twenty',
    'Possible SQL injection in the search box',
    'Dark mode',
  ])
    await api(t.app, 'POST', `/api/crm/projects/${project.name}/issues`, { token: owner.token, body: { title } });
  await api(t.app, 'POST', `/api/crm/projects/${project.name}/workers`, { token: owner.token, body: { label: 'QA' } });
});
afterAll(async () => {
  await t?.close();
  await llm?.close();
});

const post = (url: string, body: unknown, token = owner.token) =>
  api(t.app, 'POST', `/api/crm/sage${url}`, { token, body });

describe('sage', () => {
  it('lists categories of the shipped catalog and of published skills', async () => {
    const before = await api(t.app, 'GET', '/api/crm/sage/scout/categories', { token: owner.token });
    expect(before.status).toBe(200);
    const names = before.body.categories.map((c: any) => c.name);
    expect(names).toEqual(expect.arrayContaining(['engineering', 'quality', 'writing', 'data', 'product']));
    expect(names).not.toContain('community');
    const pub = await api(t.app, 'POST', '/api/crm/skills', {
      token: owner.token,
      body: { name: 'changelog-keeper', description: 'Keep CHANGELOG.md tidy', content: 'Group by version.' },
    });
    expect(pub.status).toBe(201);
    const after = await api(t.app, 'GET', '/api/crm/sage/scout/categories', { token: owner.token });
    expect(after.body.categories.find((c: any) => c.name === 'community')).toEqual({
      name: 'community',
      skills: 1,
      catalog: 0,
      published: 1,
    });
    expect(after.body.total).toBe(before.body.total + 1);
  });

  it('scout ranks skills for a need with the semantic index', async () => {
    const r = await post('/scout', { need: 'our login tests are flaky and fail randomly', project: project.name });
    expect(r.status).toBe(200);
    expect(r.body.results[0]).toMatchObject({
      skill_id: 'catalog:test-writing',
      name: 'test-writing',
      category: 'quality',
      source: 'catalog',
      installed: false,
    });
    expect(r.body.results[0].relevance).toBeGreaterThan(0);
    console.info('scout result:', JSON.stringify(r.body.results[0]));
    const sec = await post('/scout', {
      need: 'find SQL injection, XSS and SSRF vulnerabilities',
      limit: 2,
      category: 'engineering',
    });
    expect(sec.body.results[0].name).toBe('security-review');
    expect(sec.body.results.length).toBeLessThanOrEqual(2);
    expect((await post('/scout', { need: '' })).status).toBe(400);
    expect((await post('/scout', { need: 'x'.repeat(2001) })).status).toBe(400);
    expect((await post('/scout', { need: 'tests', project: 'not-mine' })).status).toBe(404);
  });

  it('quick-scan names the skills the issues call for, without the model', async () => {
    const calls = llm.modelCalls().length;
    const r = await post('/scout/quick-scan', { project: project.name });
    expect(r.status).toBe(200);
    expect(r.body.scanned).toEqual({ issues_and_pages: 3, workers: 1 });
    const byName = Object.fromEntries(r.body.findings.map((f: any) => [f.name, f]));
    expect(byName['test-writing'].evidence).toEqual([expect.stringMatching(/^#\d+ Flaky login test/)]);
    expect(byName['security-review'].evidence).toEqual([expect.stringMatching(/SQL injection/)]);
    expect(llm.modelCalls().length).toBe(calls);
    const other = await createUser(t);
    expect((await post('/scout/quick-scan', { project: project.name }, other.token)).status).toBe(403);
  });

  it('analyze reads the project with the model, keeps only findings naming catalog skills, metered', async () => {
    const r = await post('/scout/analyze', { project: project.name });
    expect(r.status).toBe(200);
    expect(r.body.summary).toBe('Testing is the main gap.');
    expect(r.body.findings).toEqual([
      { skill_id: 'catalog:test-writing', name: 'test-writing', gap: 'Flaky tests block releases.', worker: 'QA' },
      {
        skill_id: 'catalog:security-review',
        name: 'security-review',
        gap: 'The search box may be injectable.',
        worker: null,
      },
    ]);
    const prompt = JSON.stringify(llm.modelCalls().at(-1));
    expect(prompt).toContain('Flaky login test');
    const usage = await t.db
      .selectFrom('token_usage')
      .select(['source', 'total_tokens'])
      .where('source', '=', 'sage')
      .execute();
    expect(usage).toEqual([{ source: 'sage', total_tokens: 120 }]);
  });

  it('install copies a shipped skill and forks a published one into the project', async () => {
    const a = await post('/scout/install', { project: project.name, skill_id: 'catalog:test-writing' });
    expect(a.status).toBe(200);
    expect(a.body.skill).toMatchObject({ name: 'test-writing', owner_project: project.name, forked_from: null });
    expect(a.body.skill.content).toContain('# Writing tests');
    expect((await post('/scout/install', { project: project.name, skill_id: 'catalog:test-writing' })).status).toBe(
      409,
    );
    const scout = await post('/scout', { need: 'flaky tests', project: project.name });
    expect(scout.body.results.find((x: any) => x.name === 'test-writing').installed).toBe(true);
    const quick = await post('/scout/quick-scan', { project: project.name });
    expect(quick.body.findings.map((f: any) => f.name)).not.toContain('test-writing');

    const pub = (await api(t.app, 'GET', '/api/crm/skills', { token: owner.token })).body.skills.find(
      (s: any) => s.name === 'changelog-keeper',
    );
    const f = await post('/scout/install', { project: project.name, skill_id: pub.id });
    expect(f.body.skill).toMatchObject({ name: 'changelog-keeper', forked_from: pub.id });
    expect((await post('/scout/install', { project: project.name, skill_id: 'catalog:nope' })).status).toBe(404);
    expect((await post('/scout/install', { project: project.name, skill_id: 'catalog:../x' })).status).toBe(400);
  });

  it('analyze reviews one skill: clarity, scope, risks; kept and listed', async () => {
    const r = await post('/analyze', { skill_id: 'catalog:code-review' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      skill_id: 'catalog:code-review',
      name: 'code-review',
      review: {
        clarity: { score: 4, notes: 'Clear steps.' },
        scope: { score: 5, notes: 'One task.' },
        risks: ['May approve what it did not run.'],
        summary: 'A sound checklist.',
      },
    });
    expect((await post('/analyze', { skill_id: 999999 })).body.error).toBe('skill_not_found');
  });

  it('benchmark runs sample tasks and scores the answers with the rubric; status lists it', async () => {
    const r = await post('/benchmark', { skill_id: 'catalog:bug-triage' });
    expect(r.status).toBe(200);
    expect(r.body.tasks.length).toBe(2);
    expect(r.body.tasks[0].scores).toEqual({ follows_skill: 5, correctness: 4, completeness: 4, clarity: 4 });
    expect(r.body.score).toBe(0.85);
    console.info(
      'benchmark result:',
      JSON.stringify({
        skill_id: r.body.skill_id,
        score: r.body.score,
        task: r.body.tasks[0].task,
        scores: r.body.tasks[0].scores,
      }),
    );
    const one = await post('/benchmark', { skill_id: 'catalog:bug-triage', tasks: ['Triage: export is slow.'] });
    expect(one.body.tasks.map((x: any) => x.task)).toEqual(['Triage: export is slow.']);
    expect((await post('/benchmark', { skill_id: 'catalog:bug-triage', tasks: Array(6).fill('x') })).status).toBe(400);
    const pub = (await api(t.app, 'GET', '/api/crm/skills', { token: owner.token })).body.skills.find(
      (s: any) => s.name === 'changelog-keeper',
    );
    expect((await post('/benchmark', { skill_id: pub.id })).body.error).toBe('no_tasks');

    const st = await api(t.app, 'GET', '/api/crm/sage/status', { token: owner.token });
    expect(st.status).toBe(200);
    expect(st.body.catalog.shipped).toBeGreaterThanOrEqual(8);
    expect(st.body.catalog.published).toBe(1);
    expect(st.body.catalog.indexed_at).not.toBeNull();
    expect(st.body.results.map((x: any) => [x.kind, x.skill_id, x.score])).toEqual([
      ['benchmark', 'catalog:bug-triage', 0.85],
      ['benchmark', 'catalog:bug-triage', 0.85],
      ['analyze', 'catalog:code-review', 0.9],
    ]);
    const other = await createUser(t);
    expect((await api(t.app, 'GET', '/api/crm/sage/status', { token: other.token })).body.results).toEqual([]);
  });

  it('a caller without a key is told so, and nothing is called', async () => {
    const other = await createUser(t);
    const calls = llm.modelCalls().length;
    const r = await post('/analyze', { skill_id: 'catalog:code-review' }, other.token);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('llm_key_required');
    expect(llm.modelCalls().length).toBe(calls);
  });
});

/**
 * The model gateway through the API: every model call reserves before it is made, so parallel calls of a nearly
 * spent trial — note chats and transcript summaries at once — bill no more than the trial had left.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { api, buildTestApp, createProject, createUser, type TestApp } from '../../../test/helpers.ts';
import { waitFor } from '../../../test/runtime-fixtures.ts';
import { TRIAL_TOKENS } from '../usage/usage.rules.ts';

/** Tokens the trial has left when the calls start. */
const LEFT = 6_000;

describe('model gateway: a nearly spent trial', () => {
  let t: TestApp;
  let llm: Awaited<ReturnType<typeof startLlmStandIn>>;

  beforeAll(async () => {
    // A vendor that bills the whole output it was allowed and a fair count of the prompt (about 4 bytes a token,
    // below the gateway's estimate of 3), answering slowly enough that the calls overlap.
    llm = await startLlmStandIn({
      responder: (req) => ({
        delayMs: 150,
        content: [
          {
            type: 'text',
            text: String(req.body.system ?? '').includes('summarize meeting transcripts')
              ? '{"tldr":"t","key_points":[],"action_items":[],"decisions":[],"topics":[]}'
              : 'ok',
          },
        ],
        usage: {
          input_tokens: Math.ceil(Buffer.byteLength(JSON.stringify([req.body.system, req.body.messages])) / 4),
          output_tokens: req.body.max_tokens,
        },
      }),
    });
    t = await buildTestApp({ env: { LLM_PROVIDER: 'anthropic', LLM_BASE_URL: llm.anthropicUrl } });
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  it('parallel note chats and transcript summaries bill no more than the trial had left', async () => {
    await t.deps.secrets.set('PLATFORM_LLM_KEY', 'sk-platform-key-0001');
    const owner = await createUser(t);
    const p = await createProject(t, owner.id);
    await t.db.updateTable('projects').set({ trial_mode: true }).where('id', '=', p.id).execute();
    await t.db
      .insertInto('trials')
      .values({ user_id: owner.id, project_id: p.id, tokens_granted: TRIAL_TOKENS })
      .execute();
    await t.db
      .insertInto('token_usage')
      .values({ user_id: owner.id, project_id: p.id, key_source: 'trial', total_tokens: TRIAL_TOKENS - LEFT })
      .execute();
    const trialUsed = async () =>
      Number(
        (
          await t.db
            .selectFrom('token_usage')
            .select((eb) => eb.fn.sum<number>('total_tokens').as('n'))
            .where('user_id', '=', owner.id)
            .where('key_source', '=', 'trial')
            .executeTakeFirstOrThrow()
        ).n,
      );

    const note = await api(t.app, 'POST', `/api/crm/projects/${p.name}/notes`, {
      token: owner.token,
      body: { title: 'Budget' },
    });
    // Two transcripts whose summary failed, waiting for a retry (text only: no media step runs).
    const transcripts = [];
    for (let i = 0; i < 2; i++)
      transcripts.push(
        await t.db
          .insertInto('transcripts')
          .values({
            project_id: p.id,
            user_id: owner.id,
            job_id: crypto.randomUUID(),
            filename: `meeting-${i}.wav`,
            mime: 'audio/wav',
            kind: 'audio',
            size_bytes: 1,
            embed_to_rag: false,
            trial_mode: true,
            status: 'transcribed',
            progress_pct: 50,
            finished_step: 'transcript',
            transcript_text: 'We agreed to ship on Friday. '.repeat(40),
            pending: false,
            error: 'The summary failed.',
          })
          .returning('id')
          .executeTakeFirstOrThrow(),
      );

    const calls = llm.modelCalls().length;
    const [chats, retries] = await Promise.all([
      Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          api(t.app, 'POST', `/api/crm/projects/${p.name}/notes/${note.body.id}/chat`, {
            token: owner.token,
            body: { message: `Question ${i}: what do the sources say?` },
          }),
        ),
      ),
      Promise.all(
        transcripts.map((r) =>
          api(t.app, 'POST', `/api/crm/projects/${p.name}/transcripts/${r.id}/retry-summary`, { token: owner.token }),
        ),
      ),
    ]);
    expect(retries.map((r) => r.status)).toEqual([202, 202]);
    await waitFor(async () => {
      const rows = await t.db.selectFrom('transcripts').select('pending').where('project_id', '=', p.id).execute();
      return rows.every((r) => !r.pending);
    }, 20_000);

    // Every call asked for less than the whole trial; together they wanted far more than was left.
    const made = llm.modelCalls().slice(calls);
    expect(made.length).toBeGreaterThan(0);
    expect(made.reduce((n, c) => n + c.body.max_tokens, 0)).toBeLessThanOrEqual(LEFT);
    // What was billed fits what the trial had left; nothing stays reserved.
    expect(await trialUsed()).toBeLessThanOrEqual(TRIAL_TOKENS);
    const billed = await t.db
      .selectFrom('token_usage')
      .select(['source', 'key_source'])
      .where('user_id', '=', owner.id)
      .where('source', 'in', ['note_chat', 'transcript'])
      .execute();
    expect(billed.length).toBe(made.length);
    expect(billed.every((r) => r.key_source === 'trial')).toBe(true);
    const reserved = await t.db.selectFrom('token_reservations').select('id').where('user_id', '=', owner.id).execute();
    expect(reserved).toEqual([]);
    // The calls that did not fit were refused with the trial's 429, before or during the stream.
    const refused =
      chats.filter((r) => r.status === 429 || r.text.includes('token_budget_exceeded')).length +
      (
        await t.db
          .selectFrom('transcripts')
          .select('error')
          .where('project_id', '=', p.id)
          .where('summary_json', 'is', null)
          .execute()
      ).length;
    expect(refused).toBeGreaterThan(0);
    expect(chats.every((r) => r.status === 200 || r.body?.error === 'token_budget_exceeded')).toBe(true);
  });
});

/**
 * Two instances on one PostgreSQL database and one DATA_DIR process meeting transcripts one at a time: uploads
 * arriving on either instance are all finished, each exactly once, and the speech server never sees two
 * transcriptions at once (the pipeline's lease in `transcript_lease`). PostgreSQL only (`TEST_DATABASE_URL`):
 * the embedded database belongs to one process.
 */
import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  api,
  buildTestCluster,
  createProject,
  createUser,
  multipartBody,
  type TestInstance,
} from '../../../test/helpers.ts';
import { makeWav } from '../../../test/media-fixtures.ts';
import { startLlmStandIn } from '../../../test/standins/llm.ts';
import { startSpeechStandIn } from '../../../test/standins/speech.ts';

const onPostgres = inject('dbKind') === 'postgres';
/** How long the speech stand-in takes for each file (ms): long enough that an overlap would show. */
const TRANSCRIBE_MS = 400;

describe.skipIf(!onPostgres)('meeting transcripts on two instances', () => {
  let cluster: Awaited<ReturnType<typeof buildTestCluster>>;
  let llm: Awaited<ReturnType<typeof startLlmStandIn>>;
  let speech: Awaited<ReturnType<typeof startSpeechStandIn>>;
  let A: TestInstance;
  let B: TestInstance;
  /** When each transcription request reached the speech server (ms since the epoch). */
  const arrivals: number[] = [];

  beforeAll(async () => {
    llm = await startLlmStandIn({
      responder: () => ({
        content: [{ type: 'text', text: JSON.stringify({ tldr: 'Short.', key_points: [], action_items: [] }) }],
        usage: { input_tokens: 40, output_tokens: 8 },
      }),
    });
    speech = await startSpeechStandIn({
      respond: () => {
        arrivals.push(Date.now());
        return { text: 'We ship on Friday.', delayMs: TRANSCRIBE_MS };
      },
    });
    cluster = await buildTestCluster(2, {
      env: { LLM_PROVIDER: 'anthropic', LLM_BASE_URL: llm.anthropicUrl, SPEECH_URL: speech.url },
    });
    [A, B] = cluster.instances;
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
    await llm?.close();
    await speech?.close();
  });

  it('finishes uploads made on either instance one at a time, each once', async () => {
    const owner = await createUser(A);
    await A.services.settings.update({ id: owner.id, email: owner.email, role: 'user' } as never, {
      llm_key: 'sk-own-key-12345',
    });
    const project = await createProject(A, owner.id);
    const wav = fs.readFileSync(makeWav(path.join(cluster.dataDir, 'fixtures', 'a.wav'), 1));
    const ids: number[] = [];
    for (const [i, inst] of [A, B, A, B].entries()) {
      const m = multipartBody([
        { name: 'filename', value: `m${i}.wav` },
        { name: 'file', value: wav, filename: `m${i}.wav`, contentType: 'audio/wav' },
      ]);
      const r = await api(inst.app, 'POST', `/api/crm/projects/${project.name}/transcripts/upload`, {
        token: owner.token,
        payload: m.payload,
        headers: m.headers,
      });
      expect(r.status).toBe(202);
      ids.push(r.body.transcript_id);
    }

    const end = Date.now() + 90_000;
    for (;;) {
      const rows = await A.db
        .selectFrom('transcripts')
        .select(['id', 'status', 'error'])
        .where('id', 'in', ids)
        .execute();
      if (rows.every((r) => r.status === 'done' || r.status === 'error')) {
        expect(rows.map((r) => [r.status, r.error])).toEqual(ids.map(() => ['done', null]));
        break;
      }
      if (Date.now() > end) throw new Error(`not finished: ${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Each file was transcribed once, and never two at the same time.
    expect(arrivals).toHaveLength(ids.length);
    const sorted = [...arrivals].sort((x, y) => x - y);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i] - sorted[i - 1]).toBeGreaterThanOrEqual(TRANSCRIBE_MS);
  }, 120_000);
});

/**
 * Research notes across two instances on one PostgreSQL database and one DATA_DIR: an upload session started on
 * one instance takes its next chunk on the other, and the progress stream of one instance follows a source
 * processed anywhere. PostgreSQL only (the embedded database belongs to one process).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildTestCluster, createProject, createUser, type TestInstance } from '../../../test/helpers.ts';

const onPostgres = inject('dbKind') === 'postgres';

describe.skipIf(!onPostgres)('research notes on two instances', () => {
  let cluster: Awaited<ReturnType<typeof buildTestCluster>>;
  let A: TestInstance;
  let B: TestInstance;
  beforeAll(async () => {
    cluster = await buildTestCluster(2);
    [A, B] = cluster.instances;
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it('continues a chunked upload on the other instance; the stream there sees the source processed', async () => {
    const u = await createUser(A);
    const p = await createProject(A, u.id);
    const auth = { authorization: `Bearer ${u.token}` };
    const base = `/api/crm/projects/${p.name}/notes`;
    const note = await (
      await fetch(`${A.url}${base}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'shared' }),
      })
    ).json();
    const text = 'The cormorant census, in two parts.';
    const init = await (
      await fetch(`${A.url}${base}/${note.id}/sources/chunk-init`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ filename: 'census.txt', mime: 'text/plain', size: Buffer.byteLength(text) }),
      })
    ).json();
    // Chunks must be at most chunk_size; two short ones here (any size up to it is accepted).
    const send = (on: TestInstance, index: number, part: string) =>
      fetch(`${on.url}${base}/${note.id}/sources/chunks/${init.upload_id}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/octet-stream', 'x-chunk-index': String(index) },
        body: part,
      });
    const r0 = await send(A, 0, text.slice(0, 10));
    expect(r0.status).toBe(200);
    expect((await send(B, 0, 'x')).status).toBe(409);
    const r1 = await send(B, 1, text.slice(10));
    expect(r1.status).toBe(201);
    const done = await r1.json();
    expect(done).toMatchObject({ done: true, status: 'queued' });

    const stream = await fetch(`${A.url}${base}/${note.id}/sources/${done.source_id}/progress`, { headers: auth });
    const body = await stream.text();
    expect(body).toContain('"status":"done"');
    const detail = await (await fetch(`${B.url}${base}/${note.id}`, { headers: auth })).json();
    expect(detail.sources[0]).toMatchObject({ status: 'done', content_text: text });
  });
});

/**
 * Test helpers of the semantic index: in-memory documents served through the composition root's
 * document loaders (as an owning area's loader would), and waiting for index jobs.
 *
 *   const store = memoryDocs();
 *   t = await buildTestApp(store.app());
 *   await store.put(projectId, 'wiki', 'a.md', 'A', 'text');
 */
import type { AppDeps } from '../src/deps.ts';
import type { DocLoaders, DocType, LoadedDocument } from '../src/lib/doc-sources.ts';

/** A Map-backed document store per doc_type; `put`/`remove` change it and send the index job like an owner would. */
export function memoryDocs(types: DocType[] = ['wiki', 'issue', 'skill', 'transcript']) {
  const docs = new Map<string, LoadedDocument>();
  let jobs: AppDeps['jobs'] | undefined;
  const key = (projectId: number | null, docType: DocType, docId: string) => `${projectId ?? 0}|${docType}|${docId}`;
  const loaders: DocLoaders = Object.fromEntries(
    types.map((t) => [
      t,
      async (projectId: number | null, docId: string) => docs.get(key(projectId, t, docId)) ?? null,
    ]),
  );
  const send = async (projectId: number | null, docType: DocType, docId: string) => {
    if (!jobs) throw new Error('memoryDocs: build the app with store.app() first');
    await jobs.send('knowledge.index', { project_id: projectId, doc_type: docType, doc_id: docId });
  };
  return {
    docs,
    loaders,
    /** Options for `buildTestApp`: these loaders, and the app's job queue for `put`/`remove`. */
    app(extra: Parameters<typeof import('./helpers.ts').buildTestApp>[0] = {}) {
      return {
        ...extra,
        services: { ...extra.services, loaders },
        onDeps: (deps: AppDeps) => {
          jobs = deps.jobs;
          extra.onDeps?.(deps);
        },
      };
    },
    async put(projectId: number | null, docType: DocType, docId: string, title: string, text: string) {
      docs.set(key(projectId, docType, docId), { title, text, scope: projectId === null ? 'global' : 'project' });
      await send(projectId, docType, docId);
    },
    async remove(projectId: number | null, docType: DocType, docId: string) {
      docs.delete(key(projectId, docType, docId));
      await send(projectId, docType, docId);
    },
  };
}

/** Poll (every 25 ms) until no index job is pending. @throws after `timeoutMs`. */
export async function waitForIndex(deps: AppDeps, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if ((await deps.jobs.pending('knowledge.index')) === 0) return;
    if (Date.now() > until) throw new Error('index jobs still pending');
    await new Promise((r) => setTimeout(r, 25));
  }
}

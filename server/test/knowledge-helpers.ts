/**
 * Test helpers of the semantic index: in-test document loaders registered through the real
 * `deps.docSources` (dependency injection, as owners of documents do) and waiting for index jobs.
 */
import type { AppDeps } from '../src/app.ts';
import { KNOWLEDGE_INDEX_JOB, type DocType, type IndexJob, type LoadedDocument } from '../src/lib/doc-sources.ts';

/** A Map-backed document store per doc_type; `put`/`remove` change it and send the index job like an owner would. */
export function memoryDocs(deps: AppDeps, types: DocType[] = ['wiki', 'issue', 'skill', 'transcript']) {
  const docs = new Map<string, LoadedDocument>();
  const key = (projectId: number | null, docType: DocType, docId: string) => `${projectId ?? 0}|${docType}|${docId}`;
  for (const t of types)
    deps.docSources.register(t, async (projectId, docId) => docs.get(key(projectId, t, docId)) ?? null);
  return {
    docs,
    async put(projectId: number | null, docType: DocType, docId: string, title: string, text: string) {
      docs.set(key(projectId, docType, docId), { title, text, scope: projectId === null ? 'global' : 'project' });
      await deps.jobs.send(KNOWLEDGE_INDEX_JOB, {
        project_id: projectId,
        doc_type: docType,
        doc_id: docId,
      } satisfies IndexJob);
    },
    async remove(projectId: number | null, docType: DocType, docId: string) {
      docs.delete(key(projectId, docType, docId));
      await deps.jobs.send(KNOWLEDGE_INDEX_JOB, {
        project_id: projectId,
        doc_type: docType,
        doc_id: docId,
      } satisfies IndexJob);
    },
  };
}

/** Poll (every 25 ms) until no index job is pending. @throws after `timeoutMs`. */
export async function waitForIndex(deps: AppDeps, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if ((await deps.jobs.pending(KNOWLEDGE_INDEX_JOB)) === 0) return;
    if (Date.now() > until) throw new Error('index jobs still pending');
    await new Promise((r) => setTimeout(r, 25));
  }
}

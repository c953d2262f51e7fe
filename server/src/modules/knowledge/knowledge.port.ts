/**
 * The semantic index as the agent's `search_knowledge` tool sees it (runtime/ports.ts `SearchPort`): the
 * project's documents plus the platform's global ones (public docs, shipped skills), nothing of other projects
 * and no skill another user published.
 */
import type { SearchPort } from '../runtime/ports.ts';
import { PLATFORM_DOC_TYPES, type KnowledgeIndex } from './knowledge.index.ts';

export function createSearchPort(deps: { index: Pick<KnowledgeIndex, 'search'> }): SearchPort {
  return {
    async search(projectId, q, k) {
      const hits = await deps.index.search({
        q,
        k: Math.min(25, Math.max(1, Math.trunc(k) || 6)),
        projectIds: [projectId],
        includeGlobal: true,
        globalDocTypes: PLATFORM_DOC_TYPES,
      });
      return hits.map((h) => ({
        doc_type: h.doc_type,
        doc_id: h.doc_id,
        title: h.title,
        location: h.location,
        text: h.text,
        distance: h.distance,
      }));
    },
  };
}

/**
 * The wiki as the agent sees it (runtime/ports.ts `WikiPort`): read and save pages with the project
 * owner's authority; a save is credited to the worker (`updated_by` its label) and re-embeds the page like
 * any other.
 */
import type { Access } from '../../access/access.ts';
import { NotFound } from '../../http/errors.ts';
import type { WikiPort } from '../runtime/ports.ts';
import type { WikiService } from './wiki.service.ts';

/** The wiki port over the wiki service (built once by services.ts). */
export function createWikiPort(deps: {
  wiki: Pick<WikiService, 'read' | 'save'>;
  access: Pick<Access, 'ownerActor'>;
}): WikiPort {
  const { wiki } = deps;
  return {
    async read(projectId, p) {
      const { actor, projectName } = await deps.access.ownerActor(projectId);
      try {
        const page = await wiki.read(actor, projectName, p);
        return { path: page.path, content: page.content };
      } catch (err) {
        if (err instanceof NotFound) return null;
        throw err;
      }
    },
    async save(projectId, p, content, author) {
      const { actor, projectName } = await deps.access.ownerActor(projectId);
      const page = await wiki.save(actor, projectName, { path: p, content }, author);
      return { path: page.path };
    },
  };
}

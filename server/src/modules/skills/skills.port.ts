/**
 * The skills area as the agent sees it (runtime/ports.ts `SkillsPort`): the project's visible set
 * (global plus its own), read with the project owner's authority. Used for `context_assets` and `load_skill`.
 */
import type { Access } from '../../access/access.ts';
import type { SkillsPort } from '../runtime/ports.ts';
import type { SkillsService } from './skills.service.ts';

export function createSkillsPort(deps: {
  skills: Pick<SkillsService, 'listForProject'>;
  access: Pick<Access, 'ownerActor'>;
}): SkillsPort {
  const { skills } = deps;
  return {
    async list(projectId) {
      const { actor, projectName } = await deps.access.ownerActor(projectId);
      return (await skills.listForProject(actor, projectName)).skills.map((s) => ({
        name: s.name,
        description: s.description,
      }));
    },
    async get(projectId, skillName) {
      const { actor, projectName } = await deps.access.ownerActor(projectId);
      const visible = (await skills.listForProject(actor, projectName)).skills;
      // The project's own skill (or fork) wins over a global one of the same name.
      const s =
        visible.find((v) => v.name === skillName && v.owner_project !== null) ??
        visible.find((v) => v.name === skillName);
      return s ? { name: s.name, content: s.content } : null;
    },
  };
}

/**
 * The skills area as the agent sees it (runtime/ports.ts `SkillsPort`), read with the project owner's authority.
 * Used for the prompt's skill index, `context_assets` and `load_skill`.
 *
 * What reaches a worker's prompt: the project's own skills (its forks and the skills its owner installed
 * included) and the skills the platform ships (the catalog), by name, the project's own first. A global skill
 * another user published is visible (listed, searchable, forkable, installable) but never resolved here until the
 * project's owner forked or installed it, so no user can steer another tenant's workers by publishing a skill
 * under a name a preset uses.
 */
import type { SkillsPort } from '../runtime/ports.ts';
import type { SkillsService } from './skills.service.ts';

/** A skill the platform ships (the sage area's catalog). */
export interface ShippedSkill {
  name: string;
  description: string;
  content: string;
}

export function createSkillsPort(deps: {
  skills: Pick<SkillsService, 'ownOfProject'>;
  /** The skills the platform ships, resolved after the project's own. */
  shipped: ShippedSkill[];
}): SkillsPort {
  const { skills, shipped } = deps;
  /** The project's own skills, then the shipped ones whose name the project does not use. */
  const resolvable = async (projectId: number): Promise<ShippedSkill[]> => {
    // The project's own skills by its id: the run (or CLI session) acting in it was resolved and checked by its caller.
    const own = (await skills.ownOfProject(projectId)).skills;
    const names = new Set(own.map((s) => s.name));
    return [...own, ...shipped.filter((s) => !names.has(s.name))];
  };
  return {
    async list(projectId) {
      return (await resolvable(projectId)).map((s) => ({ name: s.name, description: s.description }));
    },
    async get(projectId, skillName) {
      const s = (await resolvable(projectId)).find((v) => v.name === skillName);
      return s ? { name: s.name, content: s.content } : null;
    },
  };
}

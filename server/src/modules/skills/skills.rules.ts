/**
 * Pure rules of publishing global skills (docs/ARCHITECTURE.md, Issues, skills, …): a global skill a user
 * publishes is visible to everyone (listed, searchable, forkable, installable) but reaches no worker's prompt
 * until a project installs or forks it, and one user can publish only a bounded number of skills of bounded size.
 */
import { stringify } from 'yaml';

/**
 * The SKILL.md text of a skill: YAML front matter (`name`, `description`, written by the yaml package, so any
 * description reads back as itself) between `---` lines, a blank line, then the content ending in a newline.
 */
export function skillFile(s: { name: string; description: string; content: string }): string {
  const front = stringify({ name: s.name, description: s.description });
  return `---\n${front}---\n\n${s.content}${s.content.endsWith('\n') ? '' : '\n'}`;
}

/** Global skills one user may have published at a time (administrators are not limited). */
export const MAX_PUBLISHED_PER_USER = 50;
/** Characters of a published global skill's content (a project's own skills may be larger). */
export const MAX_PUBLISHED_CONTENT = 20_000;

/**
 * Why a user may not publish (or grow) a global skill, or null when they may.
 * @param p.published how many global skills the user has published now (not counting the one being changed)
 * @param p.contentLength characters of the new content
 * @param p.isAdmin administrators are not limited in number
 */
export function publishRefusal(p: {
  published: number;
  contentLength: number;
  isAdmin: boolean;
}): 'publish_limit' | 'skill_too_large' | null {
  if (p.contentLength > MAX_PUBLISHED_CONTENT) return 'skill_too_large';
  if (!p.isAdmin && p.published >= MAX_PUBLISHED_PER_USER) return 'publish_limit';
  return null;
}

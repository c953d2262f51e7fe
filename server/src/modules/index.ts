/** Every module, in registration order. A new area adds one line here. */
import type { Module } from '../app.ts';
import { systemModule } from './system/system.routes.ts';
import { accountsModule } from './accounts/accounts.routes.ts';
import { issuesModule } from './issues/issues.routes.ts';
import { skillsModule } from './skills/skills.routes.ts';
import { wikiModule } from './wiki/wiki.routes.ts';
import { filesModule } from './files/files.routes.ts';
import { knowledgeModule } from './knowledge/knowledge.routes.ts';

export const modules: Module[] = [systemModule, accountsModule, issuesModule, skillsModule, wikiModule, filesModule, knowledgeModule];

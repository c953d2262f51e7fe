/** Every module, in registration order. A new area adds one line here. */
import type { Module } from '../app.ts';
import { systemModule } from './system/system.routes.ts';
import { accountsModule } from './accounts/accounts.routes.ts';
import { knowledgeModule } from './knowledge/knowledge.routes.ts';
import { docsModule } from './docs/docs.routes.ts';
import { helpModule } from './help/help.routes.ts';

export const modules: Module[] = [systemModule, accountsModule, knowledgeModule, docsModule, helpModule];

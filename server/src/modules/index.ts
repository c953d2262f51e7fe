/** Every module, in registration order. A new area adds one line here. */
import type { Module } from '../app.ts';
import { systemModule } from './system/system.routes.ts';
import { accountsModule } from './accounts/accounts.routes.ts';
import { projectsModule } from './projects/projects.routes.ts';
import { workersModule } from './workers/workers.routes.ts';
import { onboardingModule } from './onboarding/onboarding.routes.ts';
import { issuesModule } from './issues/issues.routes.ts';
import { skillsModule } from './skills/skills.routes.ts';
import { wikiModule } from './wiki/wiki.routes.ts';
import { filesModule } from './files/files.routes.ts';
import { pinsModule } from './pins/pins.routes.ts';
import { knowledgeModule } from './knowledge/knowledge.routes.ts';
import { docsModule } from './docs/docs.routes.ts';
import { helpModule } from './help/help.routes.ts';
import { runtimeModule } from './runtime/runtime.routes.ts';
import { chatModule } from './chat/chat.routes.ts';
import { runtimeAnalyticsModule } from './analytics/runtime-analytics.routes.ts';

export const modules: Module[] = [
  systemModule,
  accountsModule,
  projectsModule,
  workersModule,
  onboardingModule,
  issuesModule,
  skillsModule,
  wikiModule,
  filesModule,
  pinsModule,
  knowledgeModule,
  docsModule,
  helpModule,
  runtimeModule,
  chatModule,
  runtimeAnalyticsModule,
];

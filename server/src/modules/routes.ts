/**
 * Every area's routes, registered with the services built by the composition root (services.ts).
 * A new area adds one line here; a route module receives only the services it calls.
 */
import type { TypedApp } from '../http/typed-app.ts';
import type { Services } from '../services.ts';
import { accountsRoutes } from './accounts/accounts.routes.ts';
import { runtimeAnalyticsRoutes } from './analytics/runtime-analytics.routes.ts';
import { chatRoutes } from './chat/chat.routes.ts';
import { docsRoutes } from './docs/docs.routes.ts';
import { filesRoutes } from './files/files.routes.ts';
import { helpRoutes } from './help/help.routes.ts';
import { issuesRoutes } from './issues/issues.routes.ts';
import { knowledgeRoutes } from './knowledge/knowledge.routes.ts';
import { onboardingRoutes } from './onboarding/onboarding.routes.ts';
import { pinsRoutes } from './pins/pins.routes.ts';
import { projectsRoutes } from './projects/projects.routes.ts';
import { runtimeRoutes } from './runtime/runtime.routes.ts';
import { skillsRoutes } from './skills/skills.routes.ts';
import { systemRoutes } from './system/system.routes.ts';
import { wikiRoutes } from './wiki/wiki.routes.ts';
import { workersRoutes } from './workers/workers.routes.ts';

export function registerRoutes(app: TypedApp, s: Services): void {
  systemRoutes(app, s);
  accountsRoutes(app, s);
  projectsRoutes(app, s);
  workersRoutes(app, s);
  onboardingRoutes(app, s);
  issuesRoutes(app, s);
  skillsRoutes(app, s);
  wikiRoutes(app, s);
  filesRoutes(app, s);
  pinsRoutes(app, s);
  knowledgeRoutes(app, s);
  docsRoutes(app, s);
  helpRoutes(app, s);
  runtimeRoutes(app, s);
  chatRoutes(app, s);
  runtimeAnalyticsRoutes(app, s);
}

/** Every module, in registration order. A new area adds one line here. */
import type { Module } from '../app.ts';
import { systemModule } from './system/system.routes.ts';
import { accountsModule } from './accounts/accounts.routes.ts';
import { projectsModule } from './projects/projects.routes.ts';
import { workersModule } from './workers/workers.routes.ts';
import { onboardingModule } from './onboarding/onboarding.routes.ts';

export const modules: Module[] = [systemModule, accountsModule, projectsModule, workersModule, onboardingModule];

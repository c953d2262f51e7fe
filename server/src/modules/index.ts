/** Every module, in registration order. A new area adds one line here. */
import type { Module } from '../app.ts';
import { systemModule } from './system/system.routes.ts';
import { accountsModule } from './accounts/accounts.routes.ts';
import { runtimeModule } from './runtime/runtime.routes.ts';
import { chatModule } from './chat/chat.routes.ts';
import { runtimeAnalyticsModule } from './analytics/runtime-analytics.routes.ts';

export const modules: Module[] = [systemModule, accountsModule, runtimeModule, chatModule, runtimeAnalyticsModule];

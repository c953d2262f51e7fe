/**
 * Every area's routes, registered with the services built by the composition root (services.ts).
 * A new area adds one line here; a route module receives only the services it calls.
 */
import type { TypedApp } from '../http/typed-app.ts';
import type { Services } from '../services.ts';
import { accountsRoutes } from './accounts/accounts.routes.ts';
import { tokensRoutes } from './accounts/tokens.routes.ts';
import { oidcRoutes } from './accounts/oidc.routes.ts';
import { codehostRoutes } from './codehost/codehost.routes.ts';
import { runtimeAnalyticsRoutes } from './analytics/runtime-analytics.routes.ts';
import { chatRoutes } from './chat/chat.routes.ts';
import { cloudRoutes } from './cloud/cloud.routes.ts';
import { cliRoutes } from './cli/cli.routes.ts';
import { docsRoutes } from './docs/docs.routes.ts';
import { filesRoutes } from './files/files.routes.ts';
import { helpRoutes } from './help/help.routes.ts';
import { issuesRoutes } from './issues/issues.routes.ts';
import { knowledgeRoutes } from './knowledge/knowledge.routes.ts';
import { onboardingRoutes } from './onboarding/onboarding.routes.ts';
import { pinsRoutes } from './pins/pins.routes.ts';
import { privacyRoutes } from './privacy/privacy.routes.ts';
import { productAnalyticsRoutes } from './analytics/product-analytics.routes.ts';
import { projectsRoutes } from './projects/projects.routes.ts';
import { runtimeRoutes } from './runtime/runtime.routes.ts';
import { approvalsRoutes } from './runtime/approvals.routes.ts';
import { skillsRoutes } from './skills/skills.routes.ts';
import { systemRoutes } from './system/system.routes.ts';
import { transcriptsRoutes } from './transcripts/transcripts.routes.ts';
import { voiceRoutes } from './voice/voice.routes.ts';
import { wikiRoutes } from './wiki/wiki.routes.ts';
import { workersRoutes } from './workers/workers.routes.ts';
import { billingRoutes } from './billing/billing.routes.ts';
import { platformRoutes } from './platform/platform.routes.ts';
import { feedbackRoutes } from './feedback/feedback.routes.ts';
import { messengerRoutes } from './messenger/messenger.routes.ts';
import { sageRoutes } from './sage/sage.routes.ts';
import { notesRoutes } from './notes/notes.routes.ts';
import { webUiRoutes } from './webui/webui.routes.ts';
import { mcpRoutes } from './mcp/mcp.routes.ts';
import { mcpServersRoutes } from './mcp/mcp-servers.routes.ts';

export function registerRoutes(app: TypedApp, s: Services): void {
  systemRoutes(app, s);
  accountsRoutes(app, s);
  tokensRoutes(app, s);
  oidcRoutes(app, s);
  codehostRoutes(app, s);
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
  approvalsRoutes(app, s);
  chatRoutes(app, s);
  runtimeAnalyticsRoutes(app, s);
  billingRoutes(app, s);
  platformRoutes(app, s);
  feedbackRoutes(app, s);
  cloudRoutes(app, s);
  cliRoutes(app, s);
  privacyRoutes(app, s);
  productAnalyticsRoutes(app, s);
  messengerRoutes(app, s);
  sageRoutes(app, s);
  notesRoutes(app, s);
  // Meeting transcripts and voice dictation.
  transcriptsRoutes(app, s);
  voiceRoutes(app, s);
  // The MCP server at /mcp.
  mcpRoutes(app, s);
  mcpServersRoutes(app, s);
  webUiRoutes(app, s);
}

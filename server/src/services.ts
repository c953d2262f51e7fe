/**
 * The composition root: every area's repository and service is built here exactly once, in dependency
 * order, from the infrastructure of `createDeps` (deps.ts). A service names what it uses of another by
 * type (`Pick<IssuesService, 'create' | 'log'>`), so the order below is checked by the compiler: a service
 * cannot be handed one that does not exist yet.
 *
 * Routes (modules/routes.ts), job handlers (`<area>.jobs.ts`) and the agent's tool adapters
 * (`<area>.port.ts`) receive their services from here; nothing else builds a service. Start and stop steps
 * (bootstrap admin, index start, run reconciliation, the job queue) are `lifecycle`.
 */
import type { AppDeps } from './deps.ts';
import type { DocLoaders } from './lib/doc-sources.ts';
import type { PersonalData } from './lib/personal-data.ts';
import { createAccountsRepo } from './modules/accounts/accounts.repo.ts';
import { createAccountsService } from './modules/accounts/accounts.service.ts';
import { createInvitesService } from './modules/accounts/invites.service.ts';
import { createLlmKeys } from './modules/accounts/llm-keys.ts';
import { createSettingsService } from './modules/accounts/settings.service.ts';
import { createAnalyticsRepo } from './modules/analytics/analytics.repo.ts';
import { createRuntimeAnalytics } from './modules/analytics/runtime-analytics.service.ts';
import { createChatRepo } from './modules/chat/chat.repo.ts';
import { createChatService } from './modules/chat/chat.service.ts';
import { createDocsService } from './modules/docs/docs.service.ts';
import { createFilesService } from './modules/files/files.service.ts';
import { createHelpRepo } from './modules/help/help.repo.ts';
import { createHelpService } from './modules/help/help.service.ts';
import { createIssuesPort } from './modules/issues/issues.port.ts';
import { createIssuesRepo } from './modules/issues/issues.repo.ts';
import { createIssuesService } from './modules/issues/issues.service.ts';
import { createKnowledgeIndex } from './modules/knowledge/knowledge.index.ts';
import { createKnowledgeRepo } from './modules/knowledge/knowledge.repo.ts';
import { registerKnowledgeJobs } from './modules/knowledge/knowledge.jobs.ts';
import { createSearchPort } from './modules/knowledge/knowledge.port.ts';
import { createKnowledgeService, memoryLoader } from './modules/knowledge/knowledge.service.ts';
import { createOnboardingRepo } from './modules/onboarding/onboarding.repo.ts';
import { createOnboardingService } from './modules/onboarding/onboarding.service.ts';
import { createPinsRepo } from './modules/pins/pins.repo.ts';
import { createPinsService } from './modules/pins/pins.service.ts';
import { createProjectsRepo } from './modules/projects/projects.repo.ts';
import { createProjectsService } from './modules/projects/projects.service.ts';
import { createRunEvents } from './modules/runtime/events.ts';
import { registerRuntimeJobs } from './modules/runtime/runtime.jobs.ts';
import { createRuntimeRepo } from './modules/runtime/runtime.repo.ts';
import { createRuntimeService } from './modules/runtime/runtime.service.ts';
import { createSkillsPort } from './modules/skills/skills.port.ts';
import { createSkillsRepo } from './modules/skills/skills.repo.ts';
import { createSkillsService } from './modules/skills/skills.service.ts';
import { createSystemService } from './modules/system/system.service.ts';
import { createUsageRepo } from './modules/usage/usage.repo.ts';
import { createUsageService } from './modules/usage/usage.service.ts';
import { createWikiPort } from './modules/wiki/wiki.port.ts';
import { createWikiRepo } from './modules/wiki/wiki.repo.ts';
import { createWikiService } from './modules/wiki/wiki.service.ts';
import { createWorkersRepo } from './modules/workers/workers.repo.ts';
import { createWorkersService } from './modules/workers/workers.service.ts';
import path from 'node:path';

/** Options of the composition root. */
export interface ServicesOptions {
  /**
   * Extra document sources of the semantic index by type, over the areas' own (a bulk importer, or a test's
   * in-memory documents).
   */
  loaders?: DocLoaders;
}

/**
 * Build every area's service once.
 * @returns the services by area, and `lifecycle` (start after the server is built, stop on close).
 */
export function createServices(deps: AppDeps, opts: ServicesOptions = {}) {
  const { config, db, database, access, activity, jobs, log, sealer, secrets, mailer, storage } = deps;

  // Repositories: each area's SQL, over the one database.
  const accountsRepo = createAccountsRepo(db);
  const usageRepo = createUsageRepo(db);
  const projectsRepo = createProjectsRepo(db);
  const workersRepo = createWorkersRepo(db);
  const onboardingRepo = createOnboardingRepo(db);
  const issuesRepo = createIssuesRepo(db);
  const skillsRepo = createSkillsRepo(db);
  const wikiRepo = createWikiRepo(db);
  const pinsRepo = createPinsRepo(db);
  const knowledgeRepo = createKnowledgeRepo(db);
  const helpRepo = createHelpRepo(db);
  const runtimeRepo = createRuntimeRepo(db);
  const chatRepo = createChatRepo(db);
  const analyticsRepo = createAnalyticsRepo(db);

  // Accounts and usage: everything else asks these.
  const system = createSystemService({ db, database, breach: deps.breach });
  const usage = createUsageService({ repo: usageRepo, owners: accountsRepo });
  const settings = createSettingsService({ repo: accountsRepo, sealer });
  const llmKeys = createLlmKeys({ settings, secrets });
  const accounts = createAccountsService({
    repo: accountsRepo,
    tokens: deps.tokens,
    mailer,
    breach: deps.breach,
    appUrl: config.appUrl,
    userCache: deps.userCache,
    bootstrapAdmin:
      config.adminEmail && config.adminPassword
        ? { email: config.adminEmail, password: config.adminPassword }
        : undefined,
    log,
  });
  const invites = createInvitesService({ repo: accountsRepo, mailer, appUrl: config.appUrl });

  // Knowledge areas (each owns the documents it indexes).
  const issues = createIssuesService({ repo: issuesRepo, workers: workersRepo, access, activity, jobs, log });
  const skills = createSkillsService({
    repo: skillsRepo,
    projects: projectsRepo,
    access,
    jobs,
    dataDir: config.dataDir,
    log,
  });
  const wiki = createWikiService({ repo: wikiRepo, access, jobs, log });
  const files = createFilesService({ access, options: config.files });
  const pins = createPinsService({
    repo: pinsRepo,
    issues: issuesRepo,
    skills: skillsRepo,
    wiki: wikiRepo,
    workers: workersRepo,
    access,
  });
  const docs = createDocsService();

  // The shared semantic index over all of them.
  const index = createKnowledgeIndex({
    repo: knowledgeRepo,
    database,
    embedder: deps.embeddings,
    jobs,
    log,
    loaders: {
      issue: issues.loadDocument,
      skill: skills.loadDocument,
      wiki: wiki.loadDocument,
      doc: docs.loader(),
      memory: memoryLoader({ manifest: projectsRepo.manifest, access }),
      ...opts.loaders,
    },
  });
  const knowledge = createKnowledgeService({
    access,
    index,
    jobs,
    log,
    globalDocs: [{ docType: 'doc', ids: () => docs.allPages() }],
  });
  const help = createHelpService({
    repo: helpRepo,
    projects: projectsRepo,
    index,
    docs,
    embedder: deps.embeddings,
    llm: deps.llm,
    llmKeys,
    usage,
    log,
  });

  // The worker runtime and what its tools reach.
  const runtime = createRuntimeService({
    repo: runtimeRepo,
    projects: projectsRepo,
    workers: workersRepo,
    access,
    activity,
    jobs,
    llm: deps.llm,
    llmKeys,
    usage,
    agentTools: deps.agentTools,
    agentEngine: deps.agentEngine,
    ports: {
      issues: createIssuesPort({ issues, access }),
      skills: createSkillsPort({ skills, access }),
      wiki: createWikiPort({ wiki, access }),
      search: createSearchPort({ index }),
    },
    events: createRunEvents(deps.bus),
    bus: deps.bus,
    log,
  });
  const chat = createChatService({
    repo: chatRepo,
    runs: runtimeRepo,
    workers: workersRepo,
    access,
    runtime,
    events: runtime.events,
  });
  const analytics = createRuntimeAnalytics({ repo: analyticsRepo, activity });

  // Projects, workers and onboarding.
  const workers = createWorkersService({
    repo: workersRepo,
    projects: projectsRepo,
    accounts: accountsRepo,
    access,
    activity,
    storage,
    sealer,
    messenger: deps.messenger,
    disableNotify: config.disableMessengerNotify,
    usage,
    runs: runtime,
  });
  const projects = createProjectsService({
    repo: projectsRepo,
    workers: workersRepo,
    access,
    activity,
    storage,
    sealer,
    messenger: deps.messenger,
    usage,
    settings,
  });
  const onboarding = createOnboardingService({
    repo: onboardingRepo,
    accounts: accountsRepo,
    activity,
    projects,
    settings,
    usage,
    tmpRoot: path.join(config.dataDir, 'tmp'),
  });

  // Durable jobs.
  registerKnowledgeJobs(jobs, index);
  registerRuntimeJobs(jobs, runtime);

  /**
   * What each area holds of a user, for the privacy export and erasure (lib/personal-data.ts). An area that
   * stores a user's data adds its entry here.
   */
  const personalData: PersonalData[] = [];

  const lifecycle = {
    /**
     * After the routes are registered: the event bus, bootstrap admin, the index, run reconciliation, then the
     * job queue. Each step is safe when several instances start at the same moment on one database.
     */
    async start(): Promise<void> {
      await deps.bus.start();
      await accounts.start();
      await knowledge.start();
      await runtime.start();
      await jobs.start();
    },
    /** On close: stop sweeps and runs of this process, then the queue (running jobs finish first), then the bus. */
    async stop(): Promise<void> {
      await knowledge.stop();
      await runtime.stop();
      await jobs.stop();
      await deps.bus.stop();
    },
  };

  return {
    system,
    usage,
    accounts,
    invites,
    settings,
    issues,
    skills,
    wiki,
    files,
    pins,
    docs,
    knowledge,
    help,
    runtime,
    chat,
    analytics,
    workers,
    projects,
    onboarding,
    personalData,
    lifecycle,
  };
}

/** Every area's service, as built by `createServices`. */
export type Services = ReturnType<typeof createServices>;

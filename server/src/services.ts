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
import type { Database } from './db/database.ts';
import type { AppDeps } from './deps.ts';
import type { JobQueue } from './jobs/queue.ts';
import type { Logger } from './lib/logger.ts';
import type { Embedder } from './providers/embeddings/index.ts';
import type { DocLoaders } from './lib/doc-sources.ts';
import type { PersonalData } from './lib/personal-data.ts';
import { createAccountsRepo } from './modules/accounts/accounts.repo.ts';
import { createAccountsService } from './modules/accounts/accounts.service.ts';
import { createInvitesService } from './modules/accounts/invites.service.ts';
import { createLlmKeys } from './modules/accounts/llm-keys.ts';
import { createSettingsService } from './modules/accounts/settings.service.ts';
import { createTokensRepo } from './modules/accounts/tokens.repo.ts';
import { createTokensService } from './modules/accounts/tokens.service.ts';
import { createOidcService, oidcRedirectUri } from './modules/accounts/oidc.service.ts';
// The code host connection (OAuth) and the flow cookies of both OAuth flows.
import { createCodehostRepo } from './modules/codehost/codehost.repo.ts';
import { createCodehostService } from './modules/codehost/codehost.service.ts';
import { codehostPersonalData } from './modules/codehost/codehost.privacy.ts';
import { createFlowCookies } from './lib/oauth-flow.ts';
import { createAnalyticsRepo } from './modules/analytics/analytics.repo.ts';
import { createRuntimeAnalytics } from './modules/analytics/runtime-analytics.service.ts';
import { createChatRepo } from './modules/chat/chat.repo.ts';
import { createChatService } from './modules/chat/chat.service.ts';
import { createShellPort } from './modules/cloud/cloud.port.ts';
import { cloudPersonalData } from './modules/cloud/cloud.privacy.ts';
import { createCloudRepo } from './modules/cloud/cloud.repo.ts';
import { createCloudService } from './modules/cloud/cloud.service.ts';
import { cliPersonalData } from './modules/cli/cli.privacy.ts';
import { createCliPackage } from './modules/cli/cli.package.ts';
import { createCliRepo } from './modules/cli/cli.repo.ts';
import { createCliService } from './modules/cli/cli.service.ts';
import { createDocsService, type DocsService } from './modules/docs/docs.service.ts';
import { createWebUiService, DEFAULT_WEB_DIST } from './modules/webui/webui.service.ts';
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
import { createKnowledgeService, indexGlobalDocuments, memoryLoader } from './modules/knowledge/knowledge.service.ts';
import { createOnboardingRepo } from './modules/onboarding/onboarding.repo.ts';
import { createOnboardingService, type Step as OnboardingStep } from './modules/onboarding/onboarding.service.ts';
import { createPinsRepo } from './modules/pins/pins.repo.ts';
import { createPinsService } from './modules/pins/pins.service.ts';
import { createProjectsRepo } from './modules/projects/projects.repo.ts';
import { createProjectsService } from './modules/projects/projects.service.ts';
import { createModelGateway } from './modules/models/model-gateway.ts';
import { createRunEvents } from './modules/runtime/events.ts';
import { createRunExecution } from './modules/runtime/runtime.execution.ts';
import { registerRuntimeJobs } from './modules/runtime/runtime.jobs.ts';
import { createApprovalsRepo } from './modules/runtime/approvals.repo.ts';
import { createApprovalsService } from './modules/runtime/approvals.service.ts';
import { approvalsPersonalData } from './modules/runtime/approvals.privacy.ts';
import { createRuntimeRepo } from './modules/runtime/runtime.repo.ts';
import { createRuntimeService } from './modules/runtime/runtime.service.ts';
import { createSkillsPort } from './modules/skills/skills.port.ts';
import { createSkillsRepo } from './modules/skills/skills.repo.ts';
import { createSkillsService } from './modules/skills/skills.service.ts';
import { createSystemService } from './modules/system/system.service.ts';
import { registerTranscriptJobs } from './modules/transcripts/transcripts.jobs.ts';
import { createTranscriptPipeline } from './modules/transcripts/transcripts.pipeline.ts';
import { transcriptsPersonalData } from './modules/transcripts/transcripts.privacy.ts';
import { createTranscriptsRepo } from './modules/transcripts/transcripts.repo.ts';
import { createTranscriptsService } from './modules/transcripts/transcripts.service.ts';
import { voicePersonalData } from './modules/voice/voice.privacy.ts';
import { createVoiceRepo } from './modules/voice/voice.repo.ts';
import { createVoiceService } from './modules/voice/voice.service.ts';
import { createUsageRepo } from './modules/usage/usage.repo.ts';
import { createUsageService } from './modules/usage/usage.service.ts';
import { createStorageQuota } from './modules/usage/usage.storage.ts';
import { dirBytes } from './lib/dir-bytes.ts';
import { createWikiPort } from './modules/wiki/wiki.port.ts';
import { createWikiRepo } from './modules/wiki/wiki.repo.ts';
import { createWikiService } from './modules/wiki/wiki.service.ts';
import { createWorkersRepo } from './modules/workers/workers.repo.ts';
import { createWorkersService } from './modules/workers/workers.service.ts';
// Billing (plans and payments).
import { createBillingRepo } from './modules/billing/billing.repo.ts';
import { createBillingService } from './modules/billing/billing.service.ts';
import { registerBillingJobs } from './modules/billing/billing.jobs.ts';
import { billingPersonalData } from './modules/billing/billing.privacy.ts';
// Platform secrets and their audit.
import { createPlatformRepo } from './modules/platform/platform.repo.ts';
import { createPlatformService } from './modules/platform/platform.service.ts';
// Feedback and translation feedback.
import { createFeedbackRepo } from './modules/feedback/feedback.repo.ts';
import { createFeedbackService } from './modules/feedback/feedback.service.ts';
import { feedbackPersonalData } from './modules/feedback/feedback.privacy.ts';
import { createPoCatalogs } from './modules/feedback/po-catalogs.ts';
import path from 'node:path';
// Privacy: export, erasure and retention over every area's personal data.
import { accountsPersonalData } from './modules/accounts/accounts.privacy.ts';
import { chatPersonalData } from './modules/chat/chat.privacy.ts';
import { helpPersonalData } from './modules/help/help.privacy.ts';
import { issuesPersonalData } from './modules/issues/issues.privacy.ts';
import { knowledgePersonalData } from './modules/knowledge/knowledge.privacy.ts';
import { onboardingPersonalData } from './modules/onboarding/onboarding.privacy.ts';
import { pinsPersonalData } from './modules/pins/pins.privacy.ts';
import { activityPersonalData } from './modules/privacy/activity.privacy.ts';
import { registerPrivacyJobs } from './modules/privacy/privacy.jobs.ts';
import { createPrivacyRepo } from './modules/privacy/privacy.repo.ts';
import { createPrivacyService } from './modules/privacy/privacy.service.ts';
import { projectsPersonalData } from './modules/projects/projects.privacy.ts';
import { runtimePersonalData } from './modules/runtime/runtime.privacy.ts';
import { skillsPersonalData } from './modules/skills/skills.privacy.ts';
import { usagePersonalData } from './modules/usage/usage.privacy.ts';
import { wikiPersonalData } from './modules/wiki/wiki.privacy.ts';
import { workersPersonalData } from './modules/workers/workers.privacy.ts';
import { createActivityPrivacy } from './lib/activity.ts';
import { eraseOutboxFor, registerMailJobs } from './providers/mail/mail.ts';
import { forgetSecretAuthor } from './secrets/secret-store.ts';
// Admin product analytics.
import { createProductAnalytics } from './modules/analytics/product-analytics.service.ts';
// Messenger workers that answer.
import { createMessengerRepo } from './modules/messenger/messenger.repo.ts';
import { createMessengerService } from './modules/messenger/messenger.service.ts';
import { createBotPollerPort } from './modules/messenger/messenger.port.ts';
import { messengerPersonalData } from './modules/messenger/messenger.privacy.ts';
// Marketplace scouting of skills.
import { type Catalog, catalogLoader, DEFAULT_CATALOG_DIR, loadCatalog } from './modules/sage/catalog.ts';
import { createSageRepo } from './modules/sage/sage.repo.ts';
import { createSageService } from './modules/sage/sage.service.ts';
import { sagePersonalData } from './modules/sage/sage.privacy.ts';
// Research notes.
import { createNotesRepo } from './modules/notes/notes.repo.ts';
import { createNotesService } from './modules/notes/notes.service.ts';
// Throttling: rate-limit counters shared by the instances.
import { createThrottleRepo } from './modules/throttle/throttle.repo.ts';
import { createThrottleService } from './modules/throttle/throttle.service.ts';
import { createNoteChat } from './modules/notes/notes.chat.ts';
import { createNoteProcessing } from './modules/notes/notes.processing.ts';
import { notesPersonalData } from './modules/notes/notes.privacy.ts';
import { noteStorage } from './modules/notes/notes.storage.ts';
import { registerNotesJobs } from './modules/notes/notes.jobs.ts';
// Instance leases (crash recovery).
import { createInstancesRepo } from './modules/instances/instances.repo.ts';
import { createInstanceLease } from './modules/instances/instances.service.ts';
import os from 'node:os';
// The MCP server.
import { createMcpService } from './modules/mcp/mcp.service.ts';
import { SERVICE_VERSION } from './lib/version.ts';
import { DEFAULT_MCP_LIMITS } from './modules/mcp/mcp.client.ts';
import { createMcpToolSource } from './modules/mcp/mcp.port.ts';
import { createMcpRepo } from './modules/mcp/mcp.repo.ts';
import { createMcpServersService } from './modules/mcp/mcp-servers.service.ts';

/** Options of the composition root. */
export interface ServicesOptions {
  /**
   * Extra document sources of the semantic index by type, over the areas' own (a bulk importer, or a test's
   * in-memory documents).
   */
  loaders?: DocLoaders;
}

/**
 * The global documents the platform itself provides (the public docs, the shipped skill catalog): the index's
 * loaders for their types, and the ids each has now (the knowledge area's `globalDocs`).
 */
function platformDocuments(docs: DocsService, catalog: Catalog) {
  return {
    loaders: { doc: docs.loader(), catalog_skill: catalogLoader(catalog) } satisfies DocLoaders,
    sources: [
      { docType: 'doc' as const, ids: () => docs.allPages() },
      { docType: 'catalog_skill' as const, ids: () => catalog.skills.map((k) => k.name) },
    ],
  };
}

/**
 * Index the platform's global documents (public docs, skill catalog) into `database` with `embedder`, the same way a
 * start does after it is ready (knowledge.service.ts `indexGlobalDocuments`), without the rest of the services: for
 * the embedded database's schema image (seed-cli.ts), so a new DATA_DIR starts with them indexed and its first start
 * only checks their content hashes. Documents of another embedder or dimension than the configured one are
 * re-indexed by the start as usual (the index's stale-document step).
 * @returns how many documents were indexed.
 * @throws on a database failure; a document the embedder cannot embed is queued on `jobs` instead.
 */
export async function indexPlatformDocuments(deps: {
  database: Database;
  jobs: JobQueue;
  embedder: Embedder;
  log: Logger;
}): Promise<number> {
  const { database, jobs, embedder, log } = deps;
  const platform = platformDocuments(createDocsService(), loadCatalog(DEFAULT_CATALOG_DIR, log));
  const index = createKnowledgeIndex({
    repo: createKnowledgeRepo(database.db),
    database,
    embedder,
    jobs,
    log,
    loaders: platform.loaders,
  });
  return indexGlobalDocuments({ index, jobs, log, sources: platform.sources });
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
  const billingRepo = createBillingRepo(db);
  const platformRepo = createPlatformRepo(db);
  const feedbackRepo = createFeedbackRepo(db);
  const cloudRepo = createCloudRepo(db);
  const cliRepo = createCliRepo(db);
  const privacyRepo = createPrivacyRepo(db);
  const activityPrivacy = createActivityPrivacy(db);
  const messengerRepo = createMessengerRepo(db);
  const sageRepo = createSageRepo(db);
  const catalog = loadCatalog(DEFAULT_CATALOG_DIR, log);
  const notesRepo = createNotesRepo(db);
  const mcpRepo = createMcpRepo(db);
  // Meeting transcripts and voice dictation.
  const transcriptsRepo = createTranscriptsRepo(db);
  const voiceRepo = createVoiceRepo(db);

  // This process's lease: runs and reservations record its id; work of dead instances is taken back at once.
  const instances = createInstanceLease({
    repo: createInstancesRepo(db),
    leaseMs: config.instances.leaseMs,
    name: config.instances.name ?? `${os.hostname()}:${config.port}`,
    exclusive: database.kind !== 'postgres',
    log,
  });
  // Throttling (http/throttle.ts applies it to the routes).
  const throttle = createThrottleService({ repo: createThrottleRepo(db), log });

  // Accounts and usage: everything else asks these.
  const usage = createUsageService({
    repo: usageRepo,
    owners: accountsRepo,
    instanceId: instances.id,
    metrics: deps.metrics,
  });
  // Storage quotas and the disk floor (usage.storage.ts): a user's bytes are their projects' folders and note files,
  // the rows of wiki pages, transcripts and note texts, and the cloud home; each area reports its own.
  const notesFiles = noteStorage(config.dataDir);
  const storageQuota = createStorageQuota({
    repo: usageRepo,
    owners: accountsRepo,
    dataDir: config.dataDir,
    floorBytes: config.storage.diskFloorBytes,
    overrides: config.storage.quotas,
    async measure(userId) {
      const ids = await projectsRepo.ownerProjectIds(userId);
      let bytes = 0;
      for (const id of ids) bytes += (await dirBytes(access.projectDir(id))) + (await notesFiles.bytesOf(id));
      bytes += await wikiRepo.storageBytes(ids);
      bytes += await transcriptsRepo.storageBytes(ids);
      bytes += await notesRepo.storageBytes(ids);
      bytes += (await deps.containers.homeBytes?.(userId)) ?? 0;
      return bytes;
    },
  });
  const settings = createSettingsService({ repo: accountsRepo, sealer });
  const llmKeys = createLlmKeys({ settings, secrets });
  // Every model call of the service: key, reservation, the provider, usage row (modules/models).
  const models = createModelGateway({ llm: deps.llm, keys: llmKeys, usage, log });
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
  // Access tokens and the CLI's device credentials (the auth hook verifies them through `tokens.verifier`).
  const tokensRepo = createTokensRepo(db);
  const tokens = createTokensService({ repo: tokensRepo, events: accountsRepo, projects: projectsRepo, access });
  // Signing in with the identity provider, and the code host connection (both OAuth flows keep a sealed cookie).
  const flows = createFlowCookies(sealer, config.appUrl);
  const oidc = createOidcService({
    repo: accountsRepo,
    accounts,
    secrets,
    flows,
    issuer: config.vendorUrls.idpIssuer,
    name: config.idpName,
    appUrl: config.appUrl,
    userChanged: async (id) => deps.userCache.changed(id),
    log,
  });
  const codehostRepo = createCodehostRepo(db);
  const codehost = createCodehostService({
    repo: codehostRepo,
    secrets,
    sealer,
    flows,
    oauthUrl: config.vendorUrls.codehostOauth,
    apiUrl: config.vendorUrls.codehostApi,
    appUrl: config.appUrl,
    log,
  });

  // Cloud containers (before the runtime: a message resumes its project owner's paused container).
  const cloud = createCloudService({
    repo: cloudRepo,
    runtime: deps.containers,
    accounts,
    emails: accountsRepo,
    plans: accountsRepo,
    sealer,
    bus: deps.bus,
    options: {
      codehostSsh: config.cloud.codehostSsh,
      terminalIdleMs: config.cloud.terminalIdleMs,
      logLinesPerSecond: config.cloud.logLinesPerSecond,
      logKeepLines: config.cloud.logKeepLines,
    },
    codehost,
    log,
  });

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
  const wiki = createWikiService({ repo: wikiRepo, access, jobs, quota: storageQuota, log });
  const files = createFilesService({ access, codehost, quota: storageQuota, options: config.files });
  const pins = createPinsService({
    repo: pinsRepo,
    issues: issuesRepo,
    skills: skillsRepo,
    wiki: wikiRepo,
    workers: workersRepo,
    notes: notesRepo,
    access,
  });
  const docs = createDocsService();
  const platformDocs = platformDocuments(docs, catalog);
  // The web UI: the built app and its catalogs (locales/<locale>/web.po).
  const webui = createWebUiService({
    distDir: config.webDistDir ?? DEFAULT_WEB_DIST,
    localesDir: config.localesDir,
  });

  // Meeting transcripts (their pipeline, built after the index, embeds through it).
  const transcriptsRoot = path.join(config.dataDir, 'transcripts');
  const transcripts = createTranscriptsService({
    repo: transcriptsRepo,
    access,
    jobs,
    media: deps.media,
    speech: deps.speech,
    bus: deps.bus,
    root: transcriptsRoot,
    uploadLimitBytes: config.transcripts.uploadLimitBytes,
    quota: storageQuota,
  });

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
      ...platformDocs.loaders,
      memory: memoryLoader({ manifest: projectsRepo.manifest, access }),
      note_source: (projectId, docId) => notes.loadDocument(projectId, docId),
      transcript: transcripts.loadDocument,
      ...opts.loaders,
    },
  });
  // Research notes: sources and uploads, their processing, the grounded chat (index loader above reads their text).
  const notes = createNotesService({
    repo: notesRepo,
    access,
    jobs,
    bus: deps.bus,
    storage: notesFiles,
    quota: storageQuota,
    log,
    coverage: index.coverage,
  });
  const noteProcessing = createNoteProcessing({
    repo: notesRepo,
    access,
    jobs,
    bus: deps.bus,
    models,
    media: deps.media,
    speech: deps.speech,
    storage: notesFiles,
    options: {
      allow: config.notes.allow,
      pageReaderUrl: config.pageReaderUrl,
      youtubeBaseUrl: config.notes.youtubeBaseUrl,
      transcriptApiUrl: config.notes.transcriptApiUrl,
      ytDlpPath: config.notes.ytDlpPath,
    },
    log,
  });
  const noteChat = createNoteChat({
    repo: notesRepo,
    access,
    issues,
    index: { search: (input) => index.search(input) },
    models,
    log,
  });
  const knowledge = createKnowledgeService({
    access,
    index,
    jobs,
    log,
    globalDocs: platformDocs.sources,
  });
  const help = createHelpService({
    repo: helpRepo,
    projects: projectsRepo,
    index,
    docs,
    embedder: deps.embeddings,
    models,
    log,
    globalDocsSynced: () => knowledge.globalDocsSynced(),
  });

  // Outside MCP servers of a project: registered here, their tools offered to the workers naming them.
  const mcpLimits = {
    ...DEFAULT_MCP_LIMITS,
    allow: config.notes.allow,
    timeoutMs: config.mcp.callTimeoutMs,
    maxResultChars: config.mcp.resultMaxChars,
  };
  const mcpServers = createMcpServersService({ repo: mcpRepo, access, sealer, limits: mcpLimits });
  deps.agentTools.registerSource(
    createMcpToolSource({ repo: mcpRepo, workers: workersRepo, sealer, limits: mcpLimits, log }),
  );

  // The worker runtime: run execution (the engine with the metered model call) and run management.
  const runEvents = createRunEvents(deps.bus);
  // Approvals: tool calls that wait for a person; the decision requeues the run (the runtime's repository).
  const approvalsRepo = createApprovalsRepo(db);
  const approvals = createApprovalsService({
    repo: approvalsRepo,
    runs: runtimeRepo,
    access,
    activity,
    jobs,
    events: runEvents,
    timeoutS: config.approvals.timeoutS,
    mailer,
    appUrl: config.appUrl,
    log,
  });
  const runExecution = createRunExecution({
    repo: runtimeRepo,
    projects: projectsRepo,
    workers: workersRepo,
    access,
    activity,
    models,
    agentTools: deps.agentTools,
    agentEngine: deps.agentEngine,
    ports: {
      issues: createIssuesPort({ issues, access }),
      skills: createSkillsPort({ skills, shipped: catalog.skills }),
      wiki: createWikiPort({ wiki, access }),
      search: createSearchPort({ index }),
      shell: createShellPort({ cloud }),
      storage: storageQuota,
    },
    events: runEvents,
    bus: deps.bus,
    jobs,
    usage,
    approvals,
    instances,
    metrics: deps.metrics,
    log,
  });
  const runtime = createRuntimeService({
    repo: runtimeRepo,
    workers: workersRepo,
    access,
    activity,
    jobs,
    usage,
    execution: runExecution,
    events: runEvents,
    bus: deps.bus,
    containers: cloud,
    log,
  });
  const system = createSystemService({
    db,
    database,
    breach: deps.breach,
    capabilities: deps.capabilities,
    metricsToken: config.observability.metricsToken,
    metrics: deps.metrics,
    runs: runtime,
    jobs,
  });
  // Work of instances found dead: their runs are requeued or failed, their cut model calls charged.
  instances.onTakeover(async (ids) => {
    await runtime.reconcile();
    await usage.settleCrashed({ instanceIds: ids });
  });
  instances.onLost(() => runtime.dropAll());
  const chat = createChatService({
    repo: chatRepo,
    runs: runtimeRepo,
    workers: workersRepo,
    access,
    runtime,
    events: runtime.events,
  });
  const analytics = createRuntimeAnalytics({ repo: analyticsRepo, activity });
  const productAnalytics = createProductAnalytics({
    repo: analyticsRepo,
    activity,
    fleet: {
      // The dashboard's figures are counts; the runtime's name is not one of them.
      fleetStats: async () => {
        const { runtime: _runtime, ...counts } = await cloud.fleetStats();
        return counts;
      },
      waitlistStats: () => cloud.waitlistStats(),
    },
    dataDir: config.dataDir,
  });

  const transcriptPipeline = createTranscriptPipeline({
    repo: transcriptsRepo,
    media: deps.media,
    speech: deps.speech,
    models,
    index,
    jobs,
    bus: deps.bus,
    root: transcriptsRoot,
    embedded: database.kind !== 'postgres',
    instanceId: instances.id,
    log,
  });
  const voice = createVoiceService({ repo: voiceRepo, speech: deps.speech, tmpDir: path.join(config.dataDir, 'tmp') });

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
    models,
    bots: createBotPollerPort({ repo: messengerRepo, bus: deps.bus }),
    mcpServers,
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
    storage: storageQuota,
    tmpRoot: path.join(config.dataDir, 'tmp'),
    // The checklist's steps as the areas that hold them see them: workers in the user's projects, a CLI device, a
    // skill the user added, a messenger bot bound to one of their workers, an issue in one of their projects.
    done: {
      async steps(userId) {
        const ids = await projectsRepo.ownerProjectIds(userId);
        const [workers, cli, skill, bot, issue] = await Promise.all([
          ids.length ? workersRepo.count(db, ids).then((n) => n > 0) : false,
          cliRepo.deviceCount(db, userId).then((n) => n > 0),
          skillsRepo.anyAddedBy(userId),
          workersRepo.anyBotIn(ids),
          issuesRepo.anyIn(ids),
        ]);
        return (Object.entries({ workers, cli, skill, bot, issue }) as [OnboardingStep, boolean][])
          .filter(([, yes]) => yes)
          .map(([step]) => step);
      },
    },
  });

  // Billing: checkout, the provider's callbacks, renewals, cancel, status and summary.
  const billing = createBillingService({
    repo: billingRepo,
    accounts: accountsRepo,
    usage,
    holdings: {
      async countFor(userId) {
        const ids = await projectsRepo.ownerProjectIds(userId);
        return { projects: ids.length, workers: ids.length ? await workersRepo.count(db, ids) : 0 };
      },
    },
    llmKeys,
    cloud,
    payments: deps.payments,
    secrets,
    sealer,
    mailer,
    activity,
    jobs,
    userCache: deps.userCache,
    config,
    log,
  });

  // Platform secrets (admin) with their append-only audit.
  const platform = createPlatformService({
    repo: platformRepo,
    secrets,
    models,
    messenger: deps.messenger,
    vendorUrls: config.vendorUrls,
    idpRedirectUri: oidcRedirectUri(config.appUrl),
    log,
  });

  // Feedback (operator notified through the operator bot) and translation feedback (patches the .po catalogs).
  const feedback = createFeedbackService({
    repo: feedbackRepo,
    accounts: accountsRepo,
    activity,
    messenger: deps.messenger,
    secrets,
    catalogs: createPoCatalogs(config.localesDir),
    operatorChatId: config.operatorChatId,
    log,
  });

  // The command-line client: devices, session summaries, transcripts, the device link, `arc init` context.
  const cli = createCliService({
    repo: cliRepo,
    access,
    activity,
    accounts,
    credentials: tokens,
    projects: projectsRepo,
    workers: workersRepo,
    skills: createSkillsPort({ skills, shipped: catalog.skills }),
    projectDir: access.projectDir,
    pkg: createCliPackage(),
    appUrl: config.appUrl,
    log,
    linkPollMs: config.cli.linkPollMs,
    linkTimeoutMs: config.cli.linkTimeoutMs,
  });

  // Messenger workers that answer: bot pollers over the runtime, workers and issues.
  const messenger = createMessengerService({
    repo: messengerRepo,
    bots: workersRepo,
    workers,
    issues,
    runtime,
    approvals,
    events: runtime.events,
    runs: runtimeRepo,
    accounts: accountsRepo,
    userCache: deps.userCache,
    access,
    activity,
    mailer,
    messenger: deps.messenger,
    sealer,
    bus: deps.bus,
    appUrl: config.appUrl,
    options: config.messengerPoll,
    instanceId: instances.id,
    log,
  });
  // Pollers and the transcript pipeline of instances found dead resume here at once.
  instances.onTakeover(async (ids) => {
    await messenger.takeOver(ids);
    await transcriptPipeline.takeOver(ids);
  });

  // Marketplace scouting over the skills, the index and the project's issues, wiki and workers.
  const sage = createSageService({
    repo: sageRepo,
    catalog,
    skills,
    issues,
    wiki,
    workers,
    index,
    globalDocsSynced: () => knowledge.globalDocsSynced(),
    access,
    models,
    log,
  });

  // The MCP server: the areas' services as tools and resources for outside agents.
  const mcp = createMcpService({
    issues,
    wiki,
    knowledge,
    notes: noteChat,
    skills,
    pins,
    projects,
    version: SERVICE_VERSION,
    log,
  });

  // Durable jobs.
  registerKnowledgeJobs(jobs, index);
  registerRuntimeJobs(jobs, runtime, approvals, {
    requested: (notice) => messenger.approvalRequested(notice),
    decided: (approval) => messenger.approvalDecided(approval),
  });
  registerBillingJobs(jobs, billing);
  registerNotesJobs(jobs, noteProcessing);
  registerTranscriptJobs(jobs, transcriptPipeline);
  registerMailJobs(jobs, mailer);

  /**
   * What each area holds of a user, for the privacy export and erasure (lib/personal-data.ts). An area that
   * stores a user's data adds its entry here. The order is the erasure's: for each owned project the entries'
   * `eraseProject` in this order (dependents first; `project` deletes the project row, so it comes after every
   * project-scoped area), then their `eraseUser` (`profile` deletes the account, so it comes last). A new area
   * goes before the `project` entry.
   */
  const personalData: PersonalData[] = [
    // Before the runtime's entry: its runs' deletion would take the approvals (and their ids) with it.
    approvalsPersonalData({ repo: approvalsRepo, jobs }),
    runtimePersonalData({ repo: runtimeRepo, jobs }),
    chatPersonalData(chatRepo),
    knowledgePersonalData({ repo: knowledgeRepo, jobs }),
    issuesPersonalData({ repo: issuesRepo, accounts: accountsRepo }),
    ...skillsPersonalData({ repo: skillsRepo, accounts: accountsRepo, index: knowledgeRepo, dataDir: config.dataDir }),
    wikiPersonalData({ repo: wikiRepo, accounts: accountsRepo }),
    pinsPersonalData({ repo: pinsRepo, accounts: accountsRepo }),
    activityPersonalData({ activity: activityPrivacy, accounts: accountsRepo }),
    usagePersonalData(usageRepo),
    ...workersPersonalData({ repo: workersRepo, storage }),
    onboardingPersonalData({ repo: onboardingRepo, accounts: accountsRepo }),
    helpPersonalData(helpRepo),
    billingPersonalData(billingRepo, billing),
    feedbackPersonalData(feedbackRepo),
    cloudPersonalData({ repo: cloudRepo, runtime: deps.containers, log }),
    cliPersonalData(cliRepo),
    codehostPersonalData(codehostRepo),
    notesPersonalData({ repo: notesRepo, storage: notesFiles }),
    // Meeting transcripts and voice dictation.
    transcriptsPersonalData({ repo: transcriptsRepo, pipeline: transcriptPipeline, jobs }),
    voicePersonalData(voiceRepo),
    messengerPersonalData(messengerRepo),
    sagePersonalData(sageRepo),
    { area: 'export_history', eraseUser: (tx, userId) => privacyRepo.eraseUser(tx, userId) },
    projectsPersonalData({ repo: projectsRepo, projectDir: access.projectDir, storage }),
    // Access tokens go with the account (the rows cascade); the export lists them without their hashes.
    { area: 'access_tokens', exportUser: (userId) => tokensRepo.exportUser(userId) },
    ...accountsPersonalData({ repo: accountsRepo, outbox: eraseOutboxFor, secretAuthors: forgetSecretAuthor }),
  ];
  const privacy = createPrivacyService({
    repo: privacyRepo,
    registry: personalData,
    accounts: accountsRepo,
    projects: projectsRepo,
    jobs,
    userCache: deps.userCache,
    purgers: {
      chat_messages: runtimeRepo.purgeMessages,
      activity_log: activityPrivacy.purge,
      auth_events: accountsRepo.purgeAuthEvents,
      token_usage: usageRepo.purge,
      export_history: privacyRepo.purge,
    },
    log,
  });
  registerPrivacyJobs(jobs, privacy);

  const lifecycle = {
    /**
     * After the routes are registered: the event bus, bootstrap admin, the index, run reconciliation, then the
     * job queue. Each step is safe when several instances start at the same moment on one database.
     */
    async start(): Promise<void> {
      await deps.bus.start();
      await instances.start();
      await accounts.start();
      throttle.start();
      await knowledge.start();
      await runtime.start();
      cloud.start();
      notes.start();
      await jobs.start();
      privacy.start();
      await messenger.start();
      await sage.start();
      await transcriptPipeline.start();
      await instances.takeOverDead();
      knowledge.startBackground(); // the global documents, not waited for
    },
    /** On close: stop sweeps and runs of this process, then the queue (running jobs finish first), then the bus. */
    async stop(): Promise<void> {
      await messenger.stop();
      await privacy.stop();
      await knowledge.stop();
      await runtime.stop();
      cloud.stop();
      notes.stop();
      throttle.stop();
      await transcriptPipeline.stop();
      await jobs.stop();
      await instances.stop();
      await deps.bus.stop();
    },
  };

  return {
    system,
    approvals,
    throttle,
    usage,
    accounts,
    invites,
    settings,
    tokens,
    oidc,
    codehost,
    issues,
    skills,
    wiki,
    files,
    pins,
    docs,
    knowledge,
    help,
    models,
    runtime,
    chat,
    analytics,
    productAnalytics,
    workers,
    projects,
    onboarding,
    billing,
    platform,
    feedback,
    cloud,
    cli,
    messenger,
    sage,
    notes,
    noteChat,
    transcripts,
    voice,
    mcp,
    mcpServers,
    personalData,
    privacy,
    webui,
    lifecycle,
  };
}

/** Every area's service, as built by `createServices`. */
export type Services = ReturnType<typeof createServices>;

/**
 * The infrastructure every area builds on, created once per process: configuration, the database, keys,
 * the sealer and secret store, tokens, the job queue, the event bus between instances, the activity log,
 * the access rules, blob storage, and every external provider (mail, breach check, LLM, embeddings,
 * messenger, the agent engine). Tests swap a provider by passing an override; nothing in `src/` branches
 * on tests.
 *
 * The areas' repositories and services are built from these by `createServices` (services.ts), the
 * composition root.
 */
import type { Kysely } from 'kysely';
import { type Access, createAccess } from './access/access.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { DB } from './db/types.ts';
import { createUserCache, type UserCache } from './http/auth.ts';
import { createTokens, type Tokens } from './http/tokens.ts';
import { createJobQueue, type JobQueue } from './jobs/queue.ts';
import { type ActivityLog, createActivityLog } from './lib/activity.ts';
import { type Bus, createBus } from './lib/bus.ts';
import type { Logger } from './lib/logger.ts';
import { type AgentEngine, createBuiltinEngine } from './modules/runtime/engine.ts';
import { createDefaultToolRegistry } from './modules/runtime/builtin-tools.ts';
import type { ToolRegistry } from './modules/runtime/tools.ts';
import { type BreachChecker, createBreachChecker } from './providers/breach/breach.ts';
import { createEmbedder, type Embedder } from './providers/embeddings/index.ts';
import { createLlmProvider, type LlmProvider } from './providers/llm/index.ts';
import { createSpeech, type SpeechProvider } from './providers/speech/index.ts';
import { createMedia, type Media, resolveMediaTools } from './lib/media.ts';
import { type Capabilities, createCapabilities } from './lib/capabilities.ts';
import { createMetrics, type Metrics } from './lib/metrics.ts';
import { createTracing, type Tracing } from './lib/tracing.ts';
import { SERVICE_VERSION } from './lib/version.ts';
import { createMailer, type Mailer } from './providers/mail/mail.ts';
import { type ContainerRuntime, createContainerRuntime } from './providers/containers/index.ts';
import { createDockerRuntime } from './providers/containers/docker-runtime.ts';
import { createBotApiMessenger } from './providers/messenger/bot-api.ts';
import type { Messenger } from './providers/messenger/messenger.ts';
import { createSealer, type Sealer } from './secrets/crypto.ts';
import type { PaymentProvider } from './providers/payments/payments.ts';
import { createPayprov } from './providers/payments/payprov.ts';
import type { Keys } from './secrets/keys.ts';
import { createSecretStore, type SecretStore } from './secrets/secret-store.ts';
import { type BlobStorage, createBlobStorage } from './storage/storage.ts';

/** Infrastructure and providers (no area's service lives here). */
export interface AppDeps {
  config: Config;
  database: Database;
  db: Kysely<DB>;
  keys: Keys;
  log: Logger;
  sealer: Sealer;
  secrets: SecretStore;
  tokens: Tokens;
  mailer: Mailer;
  breach: BreachChecker;
  storage: BlobStorage;
  activity: ActivityLog;
  access: Access;
  jobs: JobQueue;
  /**
   * Messages between the instances serving one database (user invalidations, run events, cancels, job
   * wake-ups): PostgreSQL LISTEN/NOTIFY on a server, in-process on the embedded database. Started first and
   * stopped last by the lifecycle (services.ts).
   */
  bus: Bus;
  /** Short-lived cache of the auth hook's user rows, kept in step across instances; call `changed(id)` after changing a user. */
  userCache: UserCache;
  /** The configured LLM vendor (Anthropic Messages API or OpenAI-compatible). */
  llm: LlmProvider;
  /** Text embedder of the semantic index: OpenAI-compatible `EMBEDDINGS_URL`, or the built-in local one. */
  embeddings: Embedder;
  /** Speech to text (`SPEECH_URL`, OpenAI-compatible); unavailable without it. */
  speech: SpeechProvider;
  /** ffmpeg/ffprobe (`FFMPEG_PATH`, `FFPROBE_PATH`, else the system's, else the copies npm installed). */
  media: Media;
  /** Prometheus metrics of this process (`GET /metrics`). */
  metrics: Metrics;
  /** OpenTelemetry traces when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (loaded on demand), else undefined. */
  tracing: Promise<Tracing | undefined>;
  /** The optional tools of this machine and what each one's absence costs (start line, `/readyz`). */
  capabilities: Capabilities;
  /** The messenger's bot API (`MESSENGER_API_URL`). */
  messenger: Messenger;
  /** The engine that executes agent runs (built-in model loop). */
  agentEngine: AgentEngine;
  /** The agent's tool definitions (worker runtime). */
  agentTools: ToolRegistry;
  /** The payment provider's API (`PAYPROV_API_URL`): hosted invoices and saved-card charges. */
  payments: PaymentProvider;
  /** Where users' cloud containers run (`CONTAINER_RUNTIME`: bubblewrap sandboxes, Docker, or none). */
  containers: ContainerRuntime;
}

/**
 * Build the infrastructure over an open database.
 * @param overrides providers to swap (a test passes a stand-in), by name.
 */
export function createDeps(
  config: Config,
  database: Database,
  keys: Keys,
  log: Logger,
  overrides: Partial<AppDeps> = {},
): AppDeps {
  const sealer = overrides.sealer ?? createSealer(keys.secretEncryptionKey);
  const db = database.db;
  const llm = overrides.llm ?? createLlmProvider(config);
  const mediaTools = resolveMediaTools({ ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath });
  const media =
    overrides.media ?? createMedia({ ffmpegPath: mediaTools.ffmpeg.path, ffprobePath: mediaTools.ffprobe.path });
  const bus = overrides.bus ?? createBus(database, log);
  const metrics = overrides.metrics ?? createMetrics();
  const containers = overrides.containers ?? createContainerRuntime(config, log);
  const docker =
    containers.kind === 'docker'
      ? containers
      : createDockerRuntime({ dockerHost: config.dockerHost, image: config.cloud.image });
  const secrets = overrides.secrets ?? createSecretStore(db, sealer);
  const jobs = overrides.jobs ?? createJobQueue(database, log, bus, { jobFailed: (name) => metrics.jobFailed(name) });
  return {
    config,
    database,
    db,
    keys,
    log,
    sealer,
    secrets,
    tokens: overrides.tokens ?? createTokens(keys.crmSecret),
    mailer:
      overrides.mailer ??
      createMailer({
        db,
        appUrl: config.appUrl,
        from: config.mailFrom,
        smtpUrl: config.smtpUrl,
        emailApi: { url: config.vendorUrls.emailApi, key: () => secrets.get('EMAIL_API_KEY') },
        jobs,
        retryDelayS: config.mailRetryDelayS,
        log,
      }),
    breach: overrides.breach ?? createBreachChecker(config.breachCheckUrl, { log }),
    storage: overrides.storage ?? createBlobStorage(config.dataDir),
    activity: overrides.activity ?? createActivityLog(db, log),
    access: overrides.access ?? createAccess(db, config.dataDir),
    jobs,
    bus,
    userCache: overrides.userCache ?? createUserCache({ bus }),
    llm,
    embeddings: overrides.embeddings ?? createEmbedder(config),
    speech: overrides.speech ?? createSpeech(config, media),
    media,
    metrics,
    tracing:
      overrides.tracing ??
      createTracing({
        endpoint: config.observability.otlpEndpoint,
        serviceName: config.observability.serviceName,
        serviceVersion: SERVICE_VERSION,
      }),
    capabilities:
      overrides.capabilities ??
      createCapabilities({
        config,
        media: mediaTools,
        sandboxCheck: containers.kind === 'process' ? () => containers.check() : undefined,
        dockerPing: () => docker.check(),
      }),
    messenger: overrides.messenger ?? createBotApiMessenger(config.messengerApiUrl),
    agentEngine: overrides.agentEngine ?? createBuiltinEngine(),
    agentTools: overrides.agentTools ?? createDefaultToolRegistry(),
    payments: overrides.payments ?? createPayprov(config.payprovApiUrl),
    containers,
  };
}

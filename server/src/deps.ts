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
import { createMedia, type Media } from './lib/media.ts';
import { createMailer, type Mailer } from './providers/mail/mail.ts';
import { type ContainerRuntime, createContainerRuntime } from './providers/containers/index.ts';
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
  /** ffmpeg/ffprobe (`FFMPEG_PATH`, `FFPROBE_PATH`). */
  media: Media;
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
  const media = overrides.media ?? createMedia({ ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath });
  const bus = overrides.bus ?? createBus(database, log);
  return {
    config,
    database,
    db,
    keys,
    log,
    sealer,
    secrets: overrides.secrets ?? createSecretStore(db, sealer),
    tokens: overrides.tokens ?? createTokens(keys.crmSecret),
    mailer:
      overrides.mailer ??
      createMailer({ db, appUrl: config.appUrl, from: config.mailFrom, smtpUrl: config.smtpUrl, log }),
    breach: overrides.breach ?? createBreachChecker(config.breachCheckUrl, { log }),
    storage: overrides.storage ?? createBlobStorage(config.dataDir),
    activity: overrides.activity ?? createActivityLog(db, log),
    access: overrides.access ?? createAccess(db, config.dataDir),
    jobs: overrides.jobs ?? createJobQueue(database, log, bus),
    bus,
    userCache: overrides.userCache ?? createUserCache({ bus }),
    llm,
    embeddings: overrides.embeddings ?? createEmbedder(config),
    speech: overrides.speech ?? createSpeech(config, media),
    media,
    messenger: overrides.messenger ?? createBotApiMessenger(config.messengerApiUrl),
    agentEngine: overrides.agentEngine ?? createBuiltinEngine(),
    agentTools: overrides.agentTools ?? createDefaultToolRegistry(),
    payments: overrides.payments ?? createPayprov(config.payprovApiUrl),
    containers: overrides.containers ?? createContainerRuntime(config),
  };
}

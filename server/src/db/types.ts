/**
 * Table types for Kysely. Each area declares its tables in one interface; `DB` joins them.
 * `Generated<T>` marks columns with a database default.
 */
import type { ColumnType, Generated } from 'kysely';
import type { PassageLocation, TextMark } from '../lib/doc-sources.ts';

/** A timestamptz column: read as Date; written as Date or ISO string. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamptz column with a database default (may be omitted on insert). */
export type TimestampDefault = ColumnType<Date, Date | string | undefined, Date | string>;
/** A json/jsonb column: read parsed; written as a JSON string (`JSON.stringify`). */
export type Json<T = unknown> = ColumnType<T, string, string>;
/** A json/jsonb column with a database default. */
export type JsonDefault<T = unknown> = ColumnType<T, string | undefined, string>;

export interface FoundationTables {
  users: {
    id: Generated<number>;
    email: string;
    name: string | null;
    /** Null: no password (an account made through the identity provider). */
    password_hash: string | null;
    role: Generated<'user' | 'admin'>;
    plan: Generated<string>;
    email_verified: Generated<boolean>;
    password_version: Generated<number>;
    chat_id: string | null;
    heard_source: string | null;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  invites: {
    code: string;
    note: string | null;
    created_by: number | null;
    created_at: TimestampDefault;
    used_by: number | null;
    used_at: Timestamp | null;
  };
  signups: { id: Generated<number>; ip: string; user_id: number | null; created_at: TimestampDefault };
  email_tokens: {
    id: Generated<number>;
    user_id: number;
    kind: 'verify' | 'reset';
    token_hash: string;
    expires_at: Timestamp;
    used_at: Timestamp | null;
    created_at: TimestampDefault;
  };
  outbox: {
    id: Generated<number>;
    to_addr: string;
    subject: string;
    text_body: string;
    html_body: string | null;
    headers: Json<Record<string, string>>;
    kind: string;
    status: 'kept' | 'sent' | 'failed' | 'retrying';
    error: string | null;
    created_at: TimestampDefault;
    sent_at: Timestamp | null;
    /** Which transport handled it last: the e-mail API, SMTP, or none (kept). */
    transport: 'api' | 'smtp' | null;
    attempts: Generated<number>;
  };
  beta_waitlist: {
    id: Generated<number>;
    email: string;
    message: string | null;
    status: Generated<'open' | 'approved' | 'rejected'>;
    invite_code: string | null;
    created_at: TimestampDefault;
    decided_at: Timestamp | null;
  };
  secrets: { name: string; value_enc: string; updated_at: TimestampDefault; updated_by: string | null };
  account_settings: {
    user_id: number;
    llm_key_enc: string | null;
    upload_transcripts: Generated<boolean>;
    updated_at: TimestampDefault;
  };
  auth_events: {
    id: Generated<number>;
    user_id: number | null;
    type: string;
    ip: string | null;
    user_agent: string | null;
    created_at: TimestampDefault;
  };
  projects: {
    id: Generated<number>;
    owner_id: number;
    name: string;
    display_name: string;
    description: Generated<string>;
    icon: string | null;
    color: string | null;
    niche: string | null;
    team_preset: string | null;
    config: JsonDefault<Record<string, unknown>>;
    protocol: Generated<string>;
    trial_mode: Generated<boolean>;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  workers: {
    id: Generated<number>;
    project_id: number;
    label: string;
    icon: string | null;
    type: Generated<'terminal' | 'messenger'>;
    model: string | null;
    max_turns: Generated<number>;
    tools: JsonDefault<string[]>;
    system_prompt: Generated<string>;
    focus_dirs: JsonDefault<string[]>;
    context_assets: JsonDefault<string[]>;
    prompt_style: string | null;
    avatar_pack: Generated<string>;
    role: string | null;
    position: Generated<number>;
    status: Generated<'working' | 'idle'>;
    status_started_at: Timestamp | null;
    current_skill: string | null;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  activity_log: {
    id: Generated<number>;
    user_id: number | null;
    actor: string | null;
    project_id: number | null;
    worker_id: number | null;
    type: string;
    title: string | null;
    detail: string | null;
    payload: JsonDefault<Record<string, unknown>>;
    created_at: TimestampDefault;
  };
}

/** Issue 3: columns added to projects/workers and the tables of projects, workers, onboarding and usage. */
export interface ProjectsWorkersTables {
  projects: FoundationTables['projects'] & {
    /** The project runs on PLATFORM_LLM_KEY (trial projects). */
    uses_platform_key: Generated<boolean>;
    /** Blob key of the uploaded icon. */
    icon_key: string | null;
  };
  workers: FoundationTables['workers'] & {
    icon_key: string | null;
    avatar_key: string | null;
    /** The bot token, sealed (AES-256-GCM); never answered. */
    messenger_token_enc: string | null;
    messenger_bot_id: string | null;
    messenger_bot_username: string | null;
    /** Last heartbeat of the worker's live terminal session (written by the runtime). */
    session_seen_at: Timestamp | null;
    /** Names of the project's outside MCP servers whose tools the worker uses. */
    mcp_servers: JsonDefault<string[]>;
    /** Tool calls that wait for a person (docs/ARCHITECTURE.md, Approvals). */
    approvals: JsonDefault<Array<{ tool: string; mode: 'always' | 'once_per_run' }>>;
  };
  worker_templates: {
    id: Generated<number>;
    owner_id: number;
    name: string;
    description: Generated<string>;
    config: JsonDefault<Record<string, unknown>>;
    is_public: Generated<boolean>;
    created_at: TimestampDefault;
  };
  trials: { user_id: number; project_id: number | null; tokens_granted: number; granted_at: TimestampDefault };
  onboarding_progress: {
    user_id: number;
    state: JsonDefault<Record<string, 'completed' | 'skipped'>>;
    source: 'web' | 'cli' | null;
    completed_at: Timestamp | null;
    dismissed_at: Timestamp | null;
    started_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  onboarding_videos: {
    slot: string;
    url: string | null;
    seconds: Generated<number>;
    title: string;
    updated_at: TimestampDefault;
    updated_by: string | null;
  };
  active_issue_bindings: {
    id: Generated<number>;
    project_id: number;
    user_id: number | null;
    issue_id: number;
    title: string | null;
    source: Generated<string>;
    created_at: TimestampDefault;
  };
}

export interface UsageTables {
  token_usage: {
    id: Generated<number>;
    user_id: number | null;
    project_id: number | null;
    project_name: string | null;
    worker_id: number | null;
    model: string | null;
    /** What made the call: worker, help, transcript, note_chat, … */
    source: Generated<string>;
    input_tokens: Generated<number>;
    output_tokens: Generated<number>;
    cache_tokens: Generated<number>;
    total_tokens: Generated<number>;
    /** The agent run that made the call (worker runtime), if any. */
    run_id: ColumnType<number | null, number | null | undefined, number | null>;
    /** Whose key paid: the user's own, the platform's, or the platform's drawing on the owner's trial. */
    key_source: ColumnType<
      'own' | 'platform' | 'trial',
      'own' | 'platform' | 'trial' | undefined,
      'own' | 'platform' | 'trial'
    >;
    /** Charged from the reservation of a call cut by a crash (its worst case), not from the provider's answer. */
    estimated: Generated<boolean>;
    created_at: TimestampDefault;
  };
  /** Worst cases of model calls under way (budgets hold during a run). */
  token_reservations: {
    id: Generated<number>;
    user_id: number;
    project_id: number | null;
    worker_id: number | null;
    run_id: number | null;
    key_source: 'own' | 'platform' | 'trial';
    tokens: number;
    created_at: TimestampDefault;
    expires_at: Timestamp;
    /** The instance whose call this is (its crash charges the reservation). */
    instance_id: ColumnType<string | null, string | null | undefined, string | null>;
    project_name: ColumnType<string | null, string | null | undefined, string | null>;
    model: ColumnType<string | null, string | null | undefined, string | null>;
    source: ColumnType<string | null, string | null | undefined, string | null>;
    /** The prompt estimate (`tokens` minus it is the output granted). */
    prompt_tokens: ColumnType<number | null, number | null | undefined, number | null>;
  };
}

/** Issues, skills, wiki, pins and learnings (migration 20261121_0200_knowledge). */
export interface KnowledgeTables {
  issue_counters: { project_id: number; last_number: Generated<number> };
  issues: {
    project_id: number;
    number: number;
    title: string;
    description: Generated<string>;
    status: Generated<IssueStatus>;
    assignee: string | null;
    priority: Generated<IssuePriority>;
    labels: JsonDefault<string[]>;
    created_by: string | null;
    /** The agent tool call that created it (`run:<id>:<tool call id>`): made again, it finds this issue. */
    origin_key: ColumnType<string | null, string | null | undefined, string | null>;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  issue_activity: {
    id: Generated<number>;
    project_id: number;
    issue_number: number;
    kind: Generated<string>;
    author: string;
    message: string;
    ts: TimestampDefault;
    created_at: TimestampDefault;
  };
  skills: {
    id: Generated<number>;
    owner_project: number | null;
    name: string;
    description: Generated<string>;
    content: Generated<string>;
    version: Generated<number>;
    forked_from: number | null;
    forked_version: number | null;
    created_by: number | null;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  skill_versions: {
    id: Generated<number>;
    skill_id: number;
    version: number;
    name: string;
    description: string;
    content: string;
    author: string;
    reason: string;
    created_at: TimestampDefault;
  };
  skill_updates: {
    id: Generated<number>;
    project_id: number;
    fork_id: number;
    source_id: number;
    from_version: number;
    to_version: number;
    status: Generated<'pending' | 'approved' | 'rejected'>;
    decided_by: string | null;
    created_at: TimestampDefault;
    decided_at: Timestamp | null;
  };
  wiki_pages: {
    project_id: number;
    path: string;
    title: string;
    content: string;
    updated_by: string | null;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  pins: {
    id: Generated<number>;
    project_id: number;
    text: string;
    issue_id: number | null;
    path: string | null;
    position: number;
    created_by: string | null;
    created_at: TimestampDefault;
  };
  learnings: {
    id: Generated<number>;
    project_id: number;
    text: string;
    source: string | null;
    tags: JsonDefault<string[]>;
    author: string | null;
    created_at: TimestampDefault;
  };
}
export type IssueStatus = 'open' | 'in_progress' | 'blocked' | 'deferred' | 'closed';
export type IssuePriority = 'P0' | 'P1' | 'P2' | 'P3';

/** Worker runtime (issue 6): chat messages, agent runs, active role. */
export interface RuntimeTables {
  chat_messages: {
    id: Generated<number>;
    project_id: number;
    user_id: number | null;
    /** The worker spoken to (user messages to one worker) or who answered (assistant); null for a parallel message. */
    worker_id: number | null;
    /** Every worker a user message went to. */
    recipients: JsonDefault<number[]>;
    role: 'user' | 'assistant';
    content: string;
    run_id: number | null;
    created_at: TimestampDefault;
  };
  agent_runs: {
    id: Generated<number>;
    project_id: number;
    user_id: number | null;
    worker_id: number;
    message_id: number;
    engine: Generated<string>;
    status: Generated<'queued' | 'running' | 'waiting_approval' | 'succeeded' | 'failed' | 'cancelled'>;
    requested_model: string | null;
    model: string | null;
    cascade: Generated<boolean>;
    turns: Generated<number>;
    /** `result`: the redacted, bounded result (modules/runtime/tool-result.ts); absent on older runs. */
    tool_calls: JsonDefault<
      Array<{
        turn: number;
        tool: string;
        is_error: boolean;
        summary: string;
        result?: { preview: string; bytes: number; truncated: boolean; json: boolean };
      }>
    >;
    error: string | null;
    error_message: string | null;
    reply_message_id: number | null;
    input_tokens: Generated<number>;
    output_tokens: Generated<number>;
    cache_tokens: Generated<number>;
    total_tokens: Generated<number>;
    cancel_requested: Generated<boolean>;
    retry_of: number | null;
    instance_id: string | null;
    /** What the run has done so far (modules/runtime/journal.ts), for resuming it after a crash. */
    journal: ColumnType<unknown, string | null | undefined, string | null>;
    /** Times the run was taken back from a dead or stopping instance and queued again. */
    replays: Generated<number>;
    /** The queue job executing it. */
    job_id: string | null;
    created_at: TimestampDefault;
    started_at: Timestamp | null;
    heartbeat_at: Timestamp | null;
    finished_at: Timestamp | null;
    queue_ms: number | null;
    prep_ms: number | null;
    gen_ms: number | null;
    total_ms: number | null;
  };
  chat_active_roles: { project_id: number; user_id: number; worker_id: number; updated_at: TimestampDefault };
  /** Tool calls of runs that waited for a person's decision (docs/ARCHITECTURE.md, Approvals). */
  approvals: {
    id: Generated<number>;
    project_id: number;
    run_id: number;
    worker_id: number;
    tool: string;
    tool_use_id: string;
    input: JsonDefault<Record<string, unknown>>;
    status: Generated<'pending' | 'approved' | 'denied' | 'expired'>;
    reason: string | null;
    /** The deciding person's e-mail (`system` for an expiry). */
    decided_by: string | null;
    decided_by_user: number | null;
    channel: 'web' | 'api' | 'messenger' | 'email' | 'system' | null;
    created_at: TimestampDefault;
    decided_at: Timestamp | null;
  };
}

/** Shared semantic index and help assistant (issue 5). */
export interface IndexHelpTables {
  knowledge_documents: {
    id: Generated<number>;
    /** null: a global document (global skill, public doc). */
    project_id: number | null;
    doc_type: string;
    doc_id: string;
    scope: 'project' | 'global';
    title: Generated<string>;
    /** sha256 of title, scope and text; null marks the document for re-indexing. */
    content_hash: string | null;
    embedder: string | null;
    dims: number | null;
    chunk_count: Generated<number>;
    indexed_at: TimestampDefault;
    /** Characters of the whole document; null before locations were recorded. */
    total_chars: number | null;
    /** Characters of the document its chunks cover (less than total_chars: indexed in part). */
    indexed_chars: number | null;
  };
  knowledge_chunks: {
    id: Generated<number>;
    document_id: number;
    project_id: number | null;
    doc_type: string;
    doc_id: string;
    scope: 'project' | 'global';
    chunk_ix: number;
    title: Generated<string>;
    text: string;
    embedder: string;
    dims: number;
    /** real[]; written as a `'{…}'::real[]` literal. */
    embedding: ColumnType<number[], unknown, unknown>;
    tsv: ColumnType<string, never, never>;
    /** Where the passage is in its document (lib/doc-sources.ts `PassageLocation`); null when unknown. */
    location: ColumnType<PassageLocation | null, string | null | undefined, string | null>;
  };
  /** Chunks by project (migration 20261128_0400_knowledge_counts; kept by a trigger on knowledge_documents). */
  knowledge_chunk_counts: {
    /** `coalesce(project_id, 0)`: 0 counts the global documents. */
    project_key: number;
    chunks: Generated<number>;
  };
  help_messages: {
    id: Generated<number>;
    user_id: number;
    role: 'user' | 'assistant';
    text: string;
    sources: JsonDefault<string[]>;
    created_at: TimestampDefault;
  };
  help_usage: { user_id: number; day: string; used: Generated<number> };
}

/** Plans and payments (migration 20261124_1401_billing). */
export interface BillingTables {
  billing_accounts: {
    user_id: number;
    status: ColumnType<BillingStatus, BillingStatus | undefined, BillingStatus>;
    /** The plan the last successful payment bought. */
    paid_plan: string | null;
    billing_failures: Generated<number>;
    current_period_end: Timestamp | null;
    /** The provider's wallet of saved cards for this user. */
    wallet_id: string;
    /** The provider's card token, sealed (secrets/crypto.ts). */
    card_token_enc: string | null;
    masked_pan: string | null;
    /** The period end the last renewal attempt was for, and its number (1, 2, 3). */
    renewal_period: Timestamp | null;
    renewal_attempt: Generated<number>;
    updated_at: TimestampDefault;
  };
  payprov_invoices: {
    /** Ours, sent as `merchantPaymInfo.reference`; the provider's `invoiceId` is known once it answered. */
    reference: string;
    invoice_id: string | null;
    user_id: number;
    kind: 'checkout' | 'renewal';
    plan: string;
    /** Minor units (kopiyky). */
    amount: number;
    status: Generated<string>;
    last_modified: Timestamp | null;
    created_at: TimestampDefault;
  };
  payprov_events: {
    id: Generated<number>;
    invoice_id: string;
    status: string;
    modified_date: string;
    user_id: number | null;
    failure_reason: string | null;
    received_at: TimestampDefault;
  };
}
/** Platform secrets' audit, feedback and translation feedback (migration 20261124_1402_platform_feedback). */
export interface PlatformFeedbackTables {
  /** Append-only (a trigger refuses UPDATE and DELETE). */
  platform_audit: {
    id: Generated<number>;
    key_name: string;
    action: 'set' | 'test' | 'restart' | 'delete';
    ok: boolean | null;
    client_ip: string | null;
    user_agent: string | null;
    actor_email: string | null;
    created_at: TimestampDefault;
  };
  feedback_reports: {
    id: Generated<number>;
    user_id: number | null;
    type: 'bug' | 'feature' | 'other';
    title: string;
    description: string;
    project: string | null;
    browser: string | null;
    created_at: TimestampDefault;
  };
  translation_feedback: {
    id: Generated<number>;
    user_id: number | null;
    locale: string;
    msgid: string;
    suggestion: string;
    severity: 'minor' | 'major' | 'wrong';
    current_translation: string | null;
    page_url: string | null;
    status: ColumnType<
      'open' | 'accepted' | 'rejected',
      'open' | 'accepted' | 'rejected' | undefined,
      'open' | 'accepted' | 'rejected'
    >;
    note: string | null;
    reviewed_by: string | null;
    reviewed_at: Timestamp | null;
    created_at: TimestampDefault;
  };
}

/** Subscription status of a user (billing). */
export type BillingStatus = 'none' | 'active' | 'past_due' | 'cancelled' | 'lapsed';

/** Cloud containers, the cloud waitlist, container log lines, sweep leases (migration 20261124_1501_cloud). */
export interface CloudTables {
  cloud_containers: {
    user_id: number;
    container_id: string;
    runtime: string;
    status: 'provisioning' | 'ready' | 'paused' | 'suspended' | 'deleted';
    server_ip: string | null;
    port: number | null;
    internal_port: number | null;
    agent_authed: Generated<boolean>;
    codehost_authed: Generated<boolean>;
    ssh_public_key: string | null;
    ssh_private_enc: string | null;
    last_active: TimestampDefault;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  cloud_waitlist: {
    id: Generated<number>;
    user_id: number;
    status: Generated<'waiting' | 'invited' | 'activated'>;
    note: string | null;
    joined_at: TimestampDefault;
    invited_at: Date | null;
    activated_at: Date | null;
  };
  cloud_log_lines: { id: Generated<number>; user_id: number; line: string; created_at: TimestampDefault };
  cloud_leases: { name: string; until: Date };
}

export interface DB
  extends
    Omit<FoundationTables, 'projects' | 'workers'>,
    ProjectsWorkersTables,
    UsageTables,
    KnowledgeTables,
    RuntimeTables,
    IndexHelpTables,
    BillingTables,
    PlatformFeedbackTables,
    CloudTables,
    CliTables,
    PrivacyTables,
    MessengerSageTables,
    NotesTables,
    TranscriptVoiceTables,
    InstanceTables,
    AccessMcpTables,
    SignInProviderTables,
    ThrottleTables,
    StorageTables {}

/** The processes of the service and their leases (migration 20261125_0100_instance_leases). */
export interface InstanceTables {
  instances: {
    id: string;
    /** `host:port`, or INSTANCE_NAME. */
    name: string;
    host: string;
    /** The kernel's boot id: same host name and boot id means one machine (pids are comparable). */
    boot_id: string | null;
    pid: number;
    /** When the process started (its own clock). */
    process_started_at: Timestamp;
    started_at: TimestampDefault;
    renewed_at: TimestampDefault;
    expires_at: Timestamp;
    stopped_at: Timestamp | null;
    /** `stopped` (a clean stop), `lease_lapsed`, `process_gone`. */
    stop_reason: string | null;
  };
}

/** Identities at the OpenID provider and code host connections (migration 20261125_0100_sign_in_providers). */
export interface SignInProviderTables {
  user_identities: {
    id: Generated<number>;
    user_id: number;
    issuer: string;
    subject: string;
    email: string | null;
    created_at: TimestampDefault;
  };
  codehost_links: {
    user_id: number;
    login: string;
    codehost_user_id: string;
    /** The OAuth access token, sealed (secrets/crypto.ts). */
    token_enc: string;
    scopes: Generated<string>;
    created_at: TimestampDefault;
  };
}

/** Rate-limit counters shared by the instances (migration 20261127_2510_rate_limits). */
export interface ThrottleTables {
  rate_limit_hits: { key: string; hits: number; reset_at: Date };
}

/** Storage quotas: the bytes of each user's files (migration 20261127_2900_storage_usage; the usage area). */
export interface StorageTables {
  storage_usage: { user_id: number; bytes: ColumnType<string, number, number>; measured_at: Date };
}

/** The command-line client's devices, device links and session transcripts (migration 20261124_1301_cli). */
export interface CliTables {
  cli_devices: {
    user_id: number;
    device_id: string;
    hostname: Generated<string>;
    platform: Generated<string>;
    arc_version: Generated<string>;
    last_project: string | null;
    first_seen: TimestampDefault;
    last_seen: TimestampDefault;
  };
  cli_links: {
    code: string;
    /** SHA-256 (hex) of the link token the CLI holds; the token itself is never stored. */
    secret_hash: string;
    user_id: number | null;
    created_at: TimestampDefault;
    expires_at: Timestamp;
    confirmed_at: Timestamp | null;
    claimed_at: Timestamp | null;
    /** The device that asked for the link (its credential is tied to it), when the CLI said. */
    device_id: string | null;
    hostname: string | null;
  };
  cli_transcripts: {
    id: Generated<number>;
    owner_id: number;
    project_id: number;
    session_id: string;
    worker_id: number | null;
    mode: Generated<string>;
    device_id: string | null;
    first_prompt: Generated<string>;
    message_count: Generated<number>;
    /** Bytes of the decompressed jsonl. */
    size_bytes: Generated<number>;
    gzip: Buffer;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
}

/** Privacy (export history, daily retention runs). */
export interface PrivacyTables {
  export_history: { id: Generated<number>; user_id: number; created_at: TimestampDefault };
  retention_runs: {
    day: string;
    started_at: TimestampDefault;
    finished_at: Timestamp | null;
    deleted: JsonDefault<Record<string, number>>;
  };
}

/** Messenger workers that answer, and marketplace scouting of skills (migration `20261124_1801_messenger_sage`). */
export interface MessengerSageTables {
  messenger_pollers: {
    bot_id: string;
    worker_id: number;
    /** The next `getUpdates` offset (last handled update id + 1). */
    update_offset: ColumnType<number, number | undefined, number>;
    lease_owner: string | null;
    lease_expires_at: Date | null;
    polling_since: Date | null;
    updated_at: TimestampDefault;
  };
  messenger_updates: {
    bot_id: string;
    update_id: number;
    worker_id: number | null;
    chat_id: string | null;
    kind: string;
    run_id: number | null;
    created_at: TimestampDefault;
  };
  messenger_replies: {
    run_id: number;
    project_id: number;
    worker_id: number;
    chat_id: string;
    created_at: TimestampDefault;
    sent_at: Date | null;
  };
  /** The message an approval's request was sent as (migration 20261128_0300_approval_notices). */
  messenger_approval_notices: {
    approval_id: number;
    project_id: number;
    bot_id: string;
    chat_id: string;
    message_id: ColumnType<number, number, number>;
    text: string;
    created_at: TimestampDefault;
    edited_at: Date | null;
  };
  messenger_link_codes: {
    code_hash: string;
    user_id: number;
    created_at: TimestampDefault;
    expires_at: Timestamp;
    used_at: Date | null;
  };
  sage_results: {
    id: Generated<number>;
    kind: 'analyze' | 'benchmark';
    skill_ref: string;
    skill_name: string;
    user_id: number | null;
    project_id: number | null;
    score: number | null;
    model: string | null;
    result: Json<Record<string, unknown>>;
    created_at: TimestampDefault;
  };
  sage_catalog_state: {
    id: Generated<number>;
    size: Generated<number>;
    content_hash: string | null;
    indexed_at: Date | null;
  };
}

export interface NotesTables {
  notes: {
    id: Generated<number>;
    project_id: number;
    title: string;
    description: Generated<string>;
    created_by: number | null;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  note_sources: {
    id: Generated<number>;
    note_id: number;
    project_id: number;
    source_type: NoteSourceType;
    title: string | null;
    default_title: string;
    url: string | null;
    file_name: string | null;
    mime: string | null;
    size_bytes: number | null;
    status: ColumnType<NoteSourceStatus, NoteSourceStatus | undefined, NoteSourceStatus>;
    message: Generated<string>;
    error: string | null;
    content_text: string | null;
    /** Page and speech-segment positions in content_text (lib/doc-sources.ts `TextMark`). */
    content_marks: ColumnType<TextMark[] | null, string | null | undefined, string | null>;
    duration_seconds: number | null;
    processing_since: Date | null;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
  note_chat_messages: {
    id: Generated<number>;
    note_id: number;
    user_id: number | null;
    role: 'user' | 'assistant';
    content: string;
    sources: JsonDefault<Array<{ source_id: number; title: string }>>;
    /** The answer's citations: `[{marker, source_id, chunk_id, location, quote}]`. */
    citations: JsonDefault<
      Array<{ marker: string; source_id: number; chunk_id: number | null; location: PassageLocation; quote: string }>
    >;
    created_at: TimestampDefault;
  };
  note_issue_links: { note_id: number; issue_id: number; title: string; created_at: TimestampDefault };
  note_uploads: {
    id: string;
    note_id: number;
    project_id: number;
    user_id: number;
    filename: string;
    mime: string;
    source_type: NoteSourceType;
    size_bytes: number;
    chunk_size: number;
    next_index: Generated<number>;
    received_bytes: Generated<number>;
    writing_since: Date | null;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
}

export type NoteSourceType = 'youtube' | 'web' | 'video' | 'audio' | 'pdf' | 'docx' | 'txt' | 'markdown' | 'image';
export type NoteSourceStatus = 'queued' | 'processing' | 'done' | 'error';

/** Meeting transcripts and voice dictation. */
export interface TranscriptVoiceTables {
  transcripts: {
    id: Generated<number>;
    project_id: number;
    /** The uploader (the project's owner or an admin). */
    user_id: number;
    job_id: string;
    filename: string;
    mime: string;
    kind: 'audio' | 'video';
    size_bytes: number;
    embed_to_rag: Generated<boolean>;
    /** The project was in trial mode at upload: model calls use the platform key and draw on the trial. */
    trial_mode: Generated<boolean>;
    status: Generated<string>;
    progress_pct: Generated<number>;
    step_label: Generated<string>;
    error: string | null;
    transcript_text: string | null;
    /** The speech server's segments (milliseconds), when it gave them. */
    transcript_segments: ColumnType<
      Array<{ start_ms: number; end_ms: number; text: string }> | null,
      string | null | undefined,
      string | null
    >;
    summary_json: Json<unknown> | null;
    frames_json: Json<Array<{ ts_ms: number; description: string | null }>> | null;
    frames_dropped: Generated<number>;
    /** Path of the uploaded file relative to DATA_DIR/transcripts; null once deleted. */
    source_file: string | null;
    finished_step: string | null;
    pending: Generated<boolean>;
    interruptions: Generated<number>;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
    finished_at: Timestamp | null;
  };
  transcript_lease: { id: number; holder: string | null; transcript_id: number | null; expires_at: TimestampDefault };
  voice_usage: { user_id: number; day: string; seconds: Generated<number> };
  voice_jobs: { id: Generated<number>; user_id: number; started_at: TimestampDefault; expires_at: Timestamp };
}

/** Access tokens and device credentials (accounts), outside MCP servers (mcp); migration 20261125_2801. */
export interface AccessMcpTables {
  access_tokens: {
    id: Generated<number>;
    user_id: number;
    name: string;
    kind: Generated<'personal' | 'device'>;
    /** SHA-256 (hex) of the token; the token itself is never stored. */
    token_hash: string;
    /** The token's first characters, shown to tell tokens apart. */
    prefix: string;
    scopes: JsonDefault<Array<'read' | 'write' | 'admin'>>;
    project_id: number | null;
    device_id: string | null;
    created_at: TimestampDefault;
    expires_at: Timestamp | null;
    last_used_at: Timestamp | null;
    last_used_ip: string | null;
    revoked_at: Timestamp | null;
  };
  mcp_servers: {
    id: Generated<number>;
    project_id: number;
    name: string;
    url: string;
    /** The headers as one JSON object, sealed (AES-256-GCM); never answered. */
    headers_enc: string | null;
    header_names: JsonDefault<string[]>;
    tools: JsonDefault<Array<{ name: string; description: string }>>;
    created_by: number | null;
    created_at: TimestampDefault;
    updated_at: TimestampDefault;
  };
}

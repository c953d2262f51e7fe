/**
 * The words for the service's error answers, in one place. In English the service's own sentence is shown (it is
 * the most exact); in another language the envelope's `error` code picks the sentence (so the Ukrainian UI never
 * shows the service's English), and the answer's status a general one for a code not listed here. Request validation details (`invalid_request`, `details:
 * [{path, message}]`) are said per field, their usual phrasings translated.
 */
import { ApiFailure } from './api/client';
import { msg } from './i18n';

type T = (msgid: string, vars?: Record<string, string | number>) => string;

/** A sentence per error code the service sends; `{placeholders}` come from the envelope's fields. */
export const ERROR_MESSAGES: Record<string, string> = {
  // Accounts, sign-in, tokens
  invalid_credentials: msg('The e-mail or password is wrong.'),
  wrong_password: msg('The current password is wrong.'),
  weak_password: msg('This password is too weak: choose a longer one.'),
  breached_password: msg('This password appears in a known data breach; please choose another one.'),
  email_taken: msg('An account with this e-mail already exists.'),
  email_not_verified: msg('Verify your e-mail address first.'),
  invite_required: msg('Registration needs an invite code.'),
  invalid_invite: msg('This invite code is not valid or was already used.'),
  invite_not_found: msg('No invite has this code.'),
  invite_used: msg('This code was already used and cannot be revoked.'),
  signup_limit: msg('Too many accounts were created from this address today; try again later.'),
  token_expired: msg('Your session has expired; please sign in again.'),
  token_revoked: msg('This token was revoked.'),
  invalid_token: msg('This link or token is not valid (any more).'),
  password_changed: msg('Your password was changed; please sign in again.'),
  unauthorized: msg('Please sign in.'),
  forbidden: msg('You do not have access to this.'),
  admin_required: msg('This action needs an administrator.'),
  session_required: msg('This action needs a signed-in session; access tokens cannot do it.'),
  insufficient_scope: msg('This token lacks the scope this action needs.'),
  token_limit: msg('You have too many live tokens; revoke one first.'),
  too_many_attempts: msg('Too many failed attempts from this address; wait a little.'),
  no_password: msg('This account has no password yet; set one through the password reset link.'),
  account_not_linked: msg(
    'An account with this e-mail exists: sign in with its password and link the identity provider in your settings.',
  ),
  identity_in_use: msg('This identity already signs in to another account.'),
  already_linked: msg('Your account is already linked to another identity there.'),
  last_sign_in_method: msg('This is the only way into your account: set a password first.'),
  idp_refused: msg('The identity provider did not sign you in.'),
  idp_unavailable: msg('Signing in with the identity provider is not available right now.'),
  idp_email_missing: msg('The identity provider did not share an e-mail address.'),
  oidc_flow_expired: msg('This sign-in took too long or was started elsewhere; please start again.'),
  oidc_exchange_failed: msg('The identity provider did not accept this sign-in; please start again.'),
  link_expired: msg('This code has expired; run arc login again.'),
  link_used: msg('This code has already been used.'),
  link_not_found: msg('No device link has this code.'),
  // Plans and payment
  plan_limit_reached: msg('Your plan’s limit is reached; upgrade the plan to add more.'),
  projects_limit: msg('Your plan allows no more projects; upgrade to create more.'),
  workers_limit: msg('Your plan allows no more workers; upgrade to add more.'),
  cloud_plan_required: msg('A cloud container needs the cloud plan.'),
  payprov_unavailable: msg('Payments are not configured on this server.'),
  payprov_error: msg('The payment provider did not accept the request; try again later.'),
  storage_quota_exceeded: msg('This would go past your storage quota; delete files or upgrade.'),
  token_budget_exceeded: msg('This worker used its daily token budget; it resets at midnight UTC.'),
  llm_key_required: msg('Add your own LLM key in the account settings to use this.'),
  invalid_llm_key: msg('The LLM key must be at least 8 characters and contain no spaces.'),
  // Projects, workers, issues, skills
  project_exists: msg('A project with this technical name already exists; choose another name.'),
  invalid_project_name: msg(
    'The technical name must be 2–40 characters: lower-case Latin letters, digits, hyphens or underscores, starting and ending with a letter or digit.',
  ),
  project_not_found: msg('This project was not found.'),
  unknown_team_preset: msg('There is no such team preset.'),
  worker_not_found: msg('This worker was not found in this project.'),
  invalid_worker: msg('This worker is not one of the project’s.'),
  no_worker: msg('This project has no worker to chat with yet.'),
  bot_already_bound: msg('This bot is already bound to another worker.'),
  invalid_bot_token: msg('The messenger rejected this bot token.'),
  messenger_unavailable: msg('The messenger could not be reached; try again later.'),
  issue_not_found: msg('This issue was not found in this project.'),
  title_required: msg('The title is empty.'),
  message_required: msg('The message is empty.'),
  skill_exists: msg('A skill of this name already exists here.'),
  skill_not_found: msg('This skill was not found.'),
  publish_limit: msg('You have published the most global skills one user may; delete one first.'),
  template_not_found: msg('This template was not found.'),
  note_not_found: msg('This note was not found in this project.'),
  source_not_found: msg('This source was not found in this note.'),
  pin_not_found: msg('This pin was not found.'),
  run_not_found: msg('This run was not found in this project.'),
  run_not_active: msg('This run has already ended.'),
  run_not_retryable: msg('Only a failed or cancelled run can be retried.'),
  approval_decided: msg('This approval was already decided.'),
  // Files and uploads
  file_not_found: msg('No such file in the project.'),
  path_not_found: msg('No file or folder has this path.'),
  already_exists: msg('Something already exists at this path.'),
  is_directory: msg('This path is a folder.'),
  not_a_directory: msg('This path is a file, not a folder.'),
  path_outside_project: msg('The path leaves the project folder.'),
  invalid_path: msg('This path is not valid.'),
  empty_file: msg('The file is empty.'),
  file_too_large: msg('The file is too large.'),
  payload_too_large: msg('The upload is larger than the limit.'),
  invalid_mime: msg('This file type is not accepted.'),
  invalid_image: msg('This image type is not accepted.'),
  invalid_url: msg('Only http:// and https:// addresses can be used.'),
  url_not_allowed: msg('This address is not allowed: it is private, loopback or reserved.'),
  clone_failed: msg('The repository could not be cloned.'),
  insufficient_storage: msg('The server is short of disk space; try again later.'),
  // Speech, models, services
  speech_unavailable: msg('This server has no speech service configured.'),
  speech_error: msg('The speech service could not be reached; try again.'),
  voice_quota_exceeded: msg('The daily dictation quota is used up; it resets at midnight UTC.'),
  voice_busy: msg('Too many dictations at once; try again shortly.'),
  llm_unavailable: msg('No language model is configured on this server.'),
  llm_error: msg('The language model did not answer; try again.'),
  embeddings_unavailable: msg('Search is not available right now; try again later.'),
  help_limit_reached: msg('The help assistant’s daily limit is reached; try again tomorrow.'),
  container_runtime_unavailable: msg('This server cannot run cloud containers right now. Try again later.'),
  container_exists: msg('You already have a cloud container.'),
  container_not_found: msg('You have no cloud container yet.'),
  codehost_not_connected: msg('Your account is not connected to the code host.'),
  codehost_unavailable: msg('Connecting the code host is not available right now.'),
  // General
  rate_limited: msg('Too many requests; wait a little and try again.'),
  not_found: msg('This was not found.'),
  method_not_allowed: msg('This action is not possible here.'),
  internal_error: msg('Something went wrong on the server. Try again.'),
  not_ready: msg('The service is starting or cannot reach its database; try again shortly.'),
};

/** A general sentence per status, for a code not listed above. */
const STATUS_MESSAGES: Record<number, string> = {
  400: msg('The request was not accepted: check the fields.'),
  401: msg('Please sign in.'),
  402: msg('Your plan does not allow this; upgrade the plan.'),
  403: msg('You do not have access to this.'),
  404: msg('This was not found.'),
  409: msg('This conflicts with something that already exists.'),
  413: msg('This is larger than the limit.'),
  429: msg('Too many requests; wait a little and try again.'),
};

/** The usual phrasings of a validation detail, in words the catalogs translate. */
const DETAIL_PATTERNS: [RegExp, string][] = [
  [/^must NOT have more than (\d+) characters$/, msg('at most {n} characters')],
  [/^must NOT have fewer than (\d+) characters?$/, msg('at least {n} characters')],
  [/^must NOT have more than (\d+) items$/, msg('at most {n} items')],
  [/^must be <= (\d+)$/, msg('at most {n}')],
  [/^must be >= (\d+)$/, msg('at least {n}')],
  [/^is required$|^must have required property/, msg('is required')],
  [/^must be (?:a valid )?e-?mail/, msg('must be an e-mail address')],
  [/^must be integer$|^must be number$/, msg('must be a number')],
  [/^is not allowed|^must NOT have additional properties/, msg('is not expected here')],
];

/** A field's name from a detail's path (`body/title` → `title`). */
export const detailField = (path: string) => path.split('/').filter(Boolean).slice(1).join('.') || path;

/** A validation detail's message in the reader's language (its usual phrasings; else as the service wrote it). */
export function detailText(message: string, t: T): string {
  for (const [re, words] of DETAIL_PATTERNS) {
    const m = re.exec(message);
    if (m) return t(words, { n: m[1] ?? '' });
  }
  return message;
}

/**
 * The sentence for an error: in English the service's own; in another language the code's from the map, else the
 * status's; for anything that is not an answer of the service, the connection sentence.
 */
export function errorText(error: unknown, t: T, locale: string): string {
  if (!(error instanceof ApiFailure)) return t('Something went wrong. Check your connection and try again.');
  // English is the service's own language: its sentence is the most exact (it names limits and values).
  if (locale === 'en' && error.message) return error.message;
  const words = ERROR_MESSAGES[error.body.error];
  if (words) {
    const vars = Object.fromEntries(
      Object.entries(error.body as Record<string, unknown>).filter(
        (e): e is [string, string | number] => typeof e[1] === 'string' || typeof e[1] === 'number',
      ),
    );
    return t(words, vars);
  }
  const status = error.status >= 500 ? 500 : error.status;
  return t(STATUS_MESSAGES[status] ?? msg('Something went wrong on the server. Try again.'));
}

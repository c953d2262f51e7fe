/**
 * Every migration, in order. Forward-only: a migration is never edited or removed once landed;
 * add a new file `YYYYMMDD_NNNN_<what>.ts` and list it here.
 */
import type { Migration } from 'kysely/migration';
import * as m0001 from './20261121_0001_foundation.ts';
import * as m0002 from './20261121_0002_token_usage.ts';
import * as m0100 from './20261121_0100_projects_workers.ts';
import * as m0200 from './20261121_0200_knowledge.ts';
import * as m0601 from './20261122_0601_worker_runtime.ts';
import * as m0501 from './20261122_0501_knowledge_help.ts';
import * as m0900 from './20261123_0900_usage_budgets.ts';
import * as m20261124_0100 from './20261124_0100_unique_project_names.ts';
// Billing (plans and payments).
import * as m20261124_1401 from './20261124_1401_billing.ts';
// Platform secrets' audit, feedback, translation feedback.
import * as m20261124_1402 from './20261124_1402_platform_feedback.ts';
import * as m20261124_1501 from './20261124_1501_cloud.ts';
import * as m20261124_1301 from './20261124_1301_cli.ts';
import * as m20261124_1700 from './20261124_1700_privacy.ts';
// Messenger workers that answer, marketplace scouting.
import * as m20261124_1801 from './20261124_1801_messenger_sage.ts';
// Research notes (notes area).
import * as m20261124_1101 from './20261124_1101_notes.ts';
// Meeting transcripts and voice dictation.
import * as m20261124_1201 from './20261124_1201_transcripts_voice.ts';
// Crash recovery: instance leases, run journals, reservations charged after a crash.
import * as m20261125_0100 from './20261125_0100_instance_leases.ts';
// Access tokens, device credentials, outside MCP servers of workers.
import * as m20261125_2801 from './20261125_2801_access_tokens_mcp.ts';
// Signing in with the identity provider, the code host connection, e-mail delivery retries.
import * as m20261125_0101 from './20261125_0100_sign_in_providers.ts';
// Throttling state shared by the instances.
import * as m20261127_2510 from './20261127_2510_rate_limits.ts';
import * as m20261127_2900 from './20261127_2900_storage_usage.ts';
import * as m20261128_0100 from './20261128_0100_approvals.ts';
import * as m20261128_0200 from './20261128_0200_citations.ts';
import * as m20261128_0300 from './20261128_0300_approval_notices.ts';
import * as m20261128_0400 from './20261128_0400_knowledge_counts.ts';
import * as m20261128_0410 from './20261128_0410_export_paging.ts';

export const migrations: Record<string, Migration> = {
  '20261121_0001_foundation': m0001,
  '20261121_0002_token_usage': m0002,
  '20261121_0100_projects_workers': m0100,
  '20261121_0200_knowledge': m0200,
  '20261122_0601_worker_runtime': m0601,
  '20261122_0501_knowledge_help': m0501,
  '20261123_0900_usage_budgets': m0900,
  '20261124_0100_unique_project_names': m20261124_0100,
  // Billing (plans and payments).
  '20261124_1401_billing': m20261124_1401,
  // Platform secrets' audit, feedback, translation feedback.
  '20261124_1402_platform_feedback': m20261124_1402,
  '20261124_1501_cloud': m20261124_1501,
  '20261124_1301_cli': m20261124_1301,
  '20261124_1700_privacy': m20261124_1700,
  '20261124_1801_messenger_sage': m20261124_1801,
  // Research notes (notes area).
  '20261124_1101_notes': m20261124_1101,
  // Meeting transcripts and voice dictation.
  '20261124_1201_transcripts_voice': m20261124_1201,
  // Crash recovery: instance leases, run journals, reservations charged after a crash.
  '20261125_0100_instance_leases': m20261125_0100,
  // Access tokens, device credentials, outside MCP servers of workers.
  '20261125_2801_access_tokens_mcp': m20261125_2801,
  // Signing in with the identity provider, the code host connection, e-mail delivery retries.
  '20261125_0100_sign_in_providers': m20261125_0101,
  // Throttling state shared by the instances.
  '20261127_2510_rate_limits': m20261127_2510,
  // Storage quotas: the bytes each user's files hold.
  '20261127_2900_storage_usage': m20261127_2900,
  // Approvals: runs pause for a person before tool calls that need one.
  '20261128_0100_approvals': m20261128_0100,
  // Citations: where each indexed passage is (page, timecode, heading, lines); partial indexing made visible.
  '20261128_0200_citations': m20261128_0200,
  // Approvals through the messenger: the message each request was sent as.
  '20261128_0300_approval_notices': m20261128_0300,
  // The semantic index's chunk counts by project (the vector channel's choice of exact scan or HNSW).
  '20261128_0400_knowledge_counts': m20261128_0400,
  // The data export's pages: (owner, id) indexes of the activity log, token usage and auth events.
  '20261128_0410_export_paging': m20261128_0410,
};

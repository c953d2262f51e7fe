/**
 * Every migration, in order. Forward-only: a migration is never edited or removed once landed;
 * add a new file `YYYYMMDD_NNNN_<what>.ts` and list it here.
 */
import type { Migration } from 'kysely';
import * as m0001 from './20261121_0001_foundation.ts';
import * as m0002 from './20261121_0002_token_usage.ts';
import * as m0100 from './20261121_0100_projects_workers.ts';
import * as m0200 from './20261121_0200_knowledge.ts';
import * as m0601 from './20261122_0601_worker_runtime.ts';
import * as m0501 from './20261122_0501_knowledge_help.ts';
import * as m0900 from './20261123_0900_usage_budgets.ts';
import * as m20261124_0100 from './20261124_0100_unique_project_names.ts';

export const migrations: Record<string, Migration> = {
  '20261121_0001_foundation': m0001,
  '20261121_0002_token_usage': m0002,
  '20261121_0100_projects_workers': m0100,
  '20261121_0200_knowledge': m0200,
  '20261122_0601_worker_runtime': m0601,
  '20261122_0501_knowledge_help': m0501,
  '20261123_0900_usage_budgets': m0900,
  '20261124_0100_unique_project_names': m20261124_0100,
};

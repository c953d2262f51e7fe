/**
 * Every migration, in order. Forward-only: a migration is never edited or removed once landed;
 * add a new file `YYYYMMDD_NNNN_<what>.ts` and list it here.
 */
import type { Migration } from 'kysely';
import * as m0001 from './20261121_0001_foundation.ts';
import * as m0002 from './20261121_0002_token_usage.ts';
import * as m0501 from './20261122_0501_knowledge_help.ts';

export const migrations: Record<string, Migration> = {
  '20261121_0001_foundation': m0001,
  '20261121_0002_token_usage': m0002,
  '20261122_0501_knowledge_help': m0501,
};

/**
 * `npm run backup [-- --out FILE]` and `npm run restore -- FILE` (docs/operations.md, Backup and restore), with the
 * service's own configuration from the environment (`DATA_DIR`, `DATABASE_URL`). A backup of the embedded database
 * needs the service stopped; a restore goes into a new DATA_DIR and an empty database. One line on success, one
 * line on stderr and exit code 1 on failure (2 for a usage error or an invalid configuration).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/data-dir-lock.ts';
import { BackupError, createBackup, restoreBackup } from './ops/backup.ts';

const usage = 'usage: npm run backup [-- --out FILE]  |  npm run restore -- FILE';

async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  let args: ReturnType<typeof parseArgs<{ options: { out: { type: 'string' } }; allowPositionals: true }>>;
  try {
    args = parseArgs({ args: rest, options: { out: { type: 'string' } }, allowPositionals: true });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${usage}\n`);
    return 2;
  }
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (command === 'backup' && args.positionals.length === 0) {
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const out = path.resolve(args.values.out ?? path.join('backups', `crm-${stamp}.tar.gz`));
    const m = await createBackup({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, out });
    process.stdout.write(
      `backup written: ${out} (${m.database} database, ${m.files} files of ${config.dataDir}, release ${m.service_version}); it holds keys.json: keep it as safe as the keys\n`,
    );
    return 0;
  }
  if (command === 'restore' && args.positionals.length === 1 && !args.values.out) {
    const file = path.resolve(args.positionals[0]);
    const m = await restoreBackup({ file, dataDir: config.dataDir, databaseUrl: config.databaseUrl });
    process.stdout.write(
      `restored ${file} (made ${m.created_at} by release ${m.service_version}, ${m.files} files) into ${config.dataDir} and the ${config.databaseUrl ? 'database of DATABASE_URL' : 'embedded database'}; start the service on them\n`,
    );
    return 0;
  }
  process.stderr.write(`${usage}\n`);
  return 2;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    const known = err instanceof BackupError || err instanceof DataDirLockedError;
    process.stderr.write(known ? `${(err as Error).message}\n` : `failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);

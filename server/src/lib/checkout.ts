/**
 * Where this checkout of the service lives, for files it ships beside the code (the built web UI, the
 * catalogs, the `arc` package). Works from the sources and from the bundle `npm start` runs
 * (`node_modules/.cache/crm-server/`): both sit below the checkout's own package.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder at or above `from` that holds a package.json; `from` itself when none does. */
export function checkoutRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return from;
  }
}

/** The checkout holding this code. */
export const CHECKOUT_ROOT = checkoutRoot(path.dirname(fileURLToPath(import.meta.url)));

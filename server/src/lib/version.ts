/**
 * The service's release: the `version` of the checkout's package.json (docs/operations.md, Releases), reported by
 * `GET /healthz`, the OpenAPI document's `info.version` and the start line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CHECKOUT_ROOT } from './checkout.ts';

function readVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(CHECKOUT_ROOT, 'package.json'), 'utf8')) as { version?: string };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** The release of this checkout, e.g. `0.2.0` (`0.0.0` when package.json cannot be read). */
export const SERVICE_VERSION = readVersion();

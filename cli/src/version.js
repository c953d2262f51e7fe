/** The release of arc, from its package.json (sent as `X-Arc-Version`; the service gates features by it). */
import fs from 'node:fs';

/** @type {string} */
export const VERSION = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

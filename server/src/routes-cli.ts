/**
 * `npm run routes`: print every registered route, one `METHOD PATH` a line, with `:param` placeholders
 * (streams are listed as GET). No server starts, no database is needed (see offline-app.ts).
 */
import { buildOfflineApp } from './offline-app.ts';

const app = await buildOfflineApp('the routes listing');
process.stdout.write(`${[...new Set(app.routeList)].join('\n')}\n`);

/**
 * `npm run openapi`: print the service's OpenAPI document (JSON), as `/api/openapi.json` serves it, without
 * starting a server or opening a database (see offline-app.ts). The web UI's typed API client is generated from it.
 */
import { buildOfflineApp } from './offline-app.ts';

const app = await buildOfflineApp('the OpenAPI export');
await app.ready();
process.stdout.write(`${JSON.stringify(app.swagger())}\n`);
await app.close();

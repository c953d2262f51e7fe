/** `npm start` as a process: starts on a throw-away embedded database, answers /readyz, stops cleanly on SIGTERM. */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('graceful start and stop', () => {
  it('serves /readyz after start and exits with code 0 within 10 s of SIGTERM', async () => {
    const dataDir = fs.mkdtempSync(path.join(path.resolve('.tmp'), 'main-'));
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATA_DIR: dataDir,
        DATABASE_URL: 'memory://',
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        BREACH_CHECK_URL: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    try {
      let ready: { status: number; body: any } | undefined;
      const deadline = Date.now() + 45_000;
      while (Date.now() < deadline && child.exitCode === null) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/readyz`);
          ready = { status: res.status, body: await res.json() };
          if (res.status === 200) break;
        } catch {
          /* not listening yet */
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(ready?.status, output).toBe(200);
      expect(ready!.body).toMatchObject({ ok: true, database: 'pglite' });
      expect(fs.statSync(path.join(dataDir, 'keys.json')).mode & 0o777).toBe(0o600);

      const stopAsked = Date.now();
      child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000))]);
      expect(code, output).toBe(0);
      expect(Date.now() - stopAsked).toBeLessThan(10_000);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

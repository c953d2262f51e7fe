import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const [minMajor, minMinor] = String(pkg.engines.node).replace('>=', '').split('.').map(Number);
const atLeast = (version: string) => {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major > minMajor || (major === minMajor && minor >= minMinor);
};

/** An older Node.js on this machine (the system's), when there is one. */
const systemNode = ['/usr/bin/node', '/usr/local/bin/node'].find((f) => {
  if (!fs.existsSync(f)) return false;
  return !atLeast(execFileSync(f, ['--version'], { encoding: 'utf8' }).trim());
});

describe('the Node.js the project runs on', () => {
  it('the suite runs on a supported Node.js, the one a script finds first on its PATH', () => {
    expect(atLeast(process.versions.node)).toBe(true);
    const onPath = execFileSync('node', ['-p', 'process.execPath'], { encoding: 'utf8' }).trim();
    expect(fs.realpathSync(onPath)).toBe(fs.realpathSync(process.execPath));
  });

  it.skipIf(!systemNode)('server/start.js started by an older node says what to do and exits with code 1', () => {
    const r = spawnSync(systemNode!, ['server/start.js'], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/needs Node\.js 22\.22 or later .*this is v\d+.*npm start/);
  });
});

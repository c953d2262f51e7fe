/** Where the sandboxes' control groups go and which limits they get, on cgroup v1 and v2 layouts. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandboxCgroups, detectCgroups, limitFiles, SANDBOX_CAPS } from './cgroups.ts';
import { exposedServicePaths } from './process-runtime.ts';

const dirs: string[] = [];
const fakeRoot = (files: Record<string, string>) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-'));
  dirs.push(root);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('cgroup layout', () => {
  it('v1: a group under the service’s own group of each controller', () => {
    const root = fakeRoot({ 'pids/cgroup.procs': '', 'memory/cgroup.procs': '', 'cpu,cpuacct/cgroup.procs': '' });
    const self = '9:pids:/\n4:memory:/svc\n2:cpu,cpuacct:/\n0::/\n';
    const l = detectCgroups(root, self, 'abc');
    expect(l).toEqual({
      version: 1,
      bases: {
        pids: path.join(root, 'pids/crm-cloud-abc'),
        memory: path.join(root, 'memory/svc/crm-cloud-abc'),
        cpu: path.join(root, 'cpu,cpuacct/crm-cloud-abc'),
      },
    });
    expect(detectCgroups(fakeRoot({ 'pids/cgroup.procs': '' }), self, 'abc')).toEqual({
      version: null,
      problem: 'cgroup v1: controllers not mounted: memory, cpu',
    });
  });

  it('v2: a sibling of the service’s own group (which holds processes), or under the root', () => {
    const root = fakeRoot({
      'cgroup.controllers': 'cpu io memory pids',
      'system.slice/cgroup.controllers': 'cpu memory pids',
      'system.slice/cgroup.subtree_control': '',
    });
    expect(detectCgroups(root, '0::/system.slice/crm.service\n', 't')).toEqual({
      version: 2,
      base: path.join(root, 'system.slice/crm-cloud-t'),
      parent: path.join(root, 'system.slice'),
    });
    expect(detectCgroups(root, '0::/\n', 't')).toMatchObject({ version: 2, base: path.join(root, 'crm-cloud-t') });
    const poor = fakeRoot({ 'cgroup.controllers': 'memory' });
    expect(detectCgroups(poor, '0::/\n', 't')).toEqual({
      version: null,
      problem: 'cgroup v2: controllers not available: pids, cpu',
    });
  });

  it('writes the caps: 200 processes, 2 GB without swap, 1.5 CPUs', async () => {
    expect(limitFiles(2, SANDBOX_CAPS).map(([f, v]) => `${f}=${v}`)).toEqual([
      'pids.max=200',
      'memory.max=2147483648',
      'memory.swap.max=0',
      'cpu.max=150000 100000',
    ]);
    expect(
      limitFiles(1, SANDBOX_CAPS)
        .filter(([, , opt]) => !opt)
        .map(([f, v]) => `${f}=${v}`),
    ).toEqual([
      'pids/pids.max=200',
      'memory/memory.limit_in_bytes=2147483648',
      'cpu/cpu.cfs_period_us=100000',
      'cpu/cpu.cfs_quota_us=150000',
    ]);
    // On a v2 layout (plain files here): controllers handed down, limits written, procs files returned.
    const root = fakeRoot({ 'cgroup.controllers': 'cpu memory pids', 'cgroup.subtree_control': '' });
    const cg = createSandboxCgroups({ tag: 't', root, selfCgroup: '0::/\n' });
    fs.mkdirSync(path.join(root, 'crm-cloud-t'));
    fs.writeFileSync(path.join(root, 'crm-cloud-t', 'cgroup.subtree_control'), '');
    const procs = await cg.ensure(7, SANDBOX_CAPS);
    expect(procs).toEqual([path.join(root, 'crm-cloud-t', 'u7', 'cgroup.procs')]);
    expect(fs.readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8')).toBe('+pids +memory +cpu');
    expect(fs.readFileSync(path.join(root, 'crm-cloud-t', 'u7', 'cpu.max'), 'utf8')).toBe('150000 100000');
    expect(fs.readFileSync(path.join(root, 'crm-cloud-t', 'u7', 'pids.max'), 'utf8')).toBe('200');
  });
});

describe('service files seen by a sandbox', () => {
  it('names DATA_DIR or the checkout under a bound host folder', () => {
    const bound = ['/usr', '/etc/ssl/certs'];
    expect(exposedServicePaths({ dataDir: '/srv/crm/data', checkoutDir: '/srv/crm' }, bound)).toEqual([]);
    expect(exposedServicePaths({ dataDir: '/usr/local/crm/data', checkoutDir: '/opt/crm' }, bound)).toEqual([
      'DATA_DIR (/usr/local/crm/data) lies under /usr, which every sandbox sees',
    ]);
    expect(exposedServicePaths({ dataDir: '/srv/d', checkoutDir: '/usr' }, bound)).toHaveLength(1);
    expect(exposedServicePaths({ dataDir: '/usrdata', checkoutDir: '/srv' }, bound)).toEqual([]);
  });
});

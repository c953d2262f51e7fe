/**
 * The egress guard and the system-call filter of the `docker` runtime's containers (docs/configuration.md,
 * "Cloud sandbox caps"): the one place that names the files shipped for them and loads the guard.
 *
 *  - `cloud-egress.nft` (beside this file): an nftables table that refuses traffic from the users' bridges
 *    (`crm-u<id>`) to the engine's host and to private, loopback, link-local (cloud metadata), CGNAT and IPv6
 *    ULA/link-local ranges;
 *  - `cloud-seccomp.json`: the engine's default system-call profile, except that `clone`/`unshare` with
 *    CLONE_NEWUSER fail (EPERM) and `clone3` answers ENOSYS, so no user namespace can be made inside.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CHECKOUT_ROOT } from '../../lib/checkout.ts';
import { RuntimeUnavailable } from './runtime.ts';

const SHIPPED = path.join(CHECKOUT_ROOT, 'server', 'src', 'providers', 'containers');

/** The nftables ruleset of the egress guard (absolute path in this checkout). */
export const EGRESS_RULESET_PATH = path.join(SHIPPED, 'cloud-egress.nft');
/** The system-call profile of the containers (absolute path in this checkout). */
export const SECCOMP_PROFILE_PATH = path.join(SHIPPED, 'cloud-seccomp.json');
/** The nftables table the ruleset makes. */
export const EGRESS_TABLE = 'crm_cloud_egress';
/** Host interface name of user `userId`'s bridge (at most 15 characters; the ruleset matches `crm-u*`). */
export const bridgeNameOf = (userId: number) => `crm-u${userId}`;

/** The profile's JSON text, as the Docker engine takes it inline (`seccomp=<json>`). */
export function seccompProfileText(): string {
  return JSON.stringify(JSON.parse(fs.readFileSync(SECCOMP_PROFILE_PATH, 'utf8')));
}

/**
 * Load (or atomically replace) the egress guard on this host with `nft -f`. Needs root and nftables, and is
 * only meaningful when the engine runs on this host.
 * @throws RuntimeUnavailable `container_caps_unavailable` (the detail, for the log, says why).
 */
export function loadEgressFirewall(nftPath = 'nft'): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(nftPath, ['-f', EGRESS_RULESET_PATH], { timeout: 10_000 }, (err, _out, stderr) => {
      if (!err) return resolve();
      reject(
        new RuntimeUnavailable(
          "This server cannot enforce the cloud containers' network limits.",
          `loading ${EGRESS_RULESET_PATH} with nft failed: ${String(stderr || err.message).slice(0, 400)}`,
          'container_caps_unavailable',
        ),
      );
    });
  });
}

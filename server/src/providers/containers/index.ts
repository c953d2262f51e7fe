/** The configured container runtime (`CONTAINER_RUNTIME`): `process` (default), `docker` or `none`. */
import type { Config } from '../../config.ts';
import { createDockerRuntime } from './docker-runtime.ts';
import { createProcessRuntime } from './process-runtime.ts';
import { type ContainerRuntime, createNoRuntime } from './runtime.ts';

export * from './runtime.ts';

/**
 * Build the runtime `config.containerRuntime` names. Nothing is contacted until first use.
 * @param log warnings of the runtime (sandboxes run uncapped under `CLOUD_ALLOW_UNCAPPED`).
 */
export function createContainerRuntime(
  config: Pick<Config, 'containerRuntime' | 'dockerHost' | 'dataDir' | 'cloud'>,
  log?: { warn(o: object, m: string): void },
): ContainerRuntime {
  if (config.containerRuntime === 'docker')
    return createDockerRuntime({
      dockerHost: config.dockerHost,
      image: config.cloud.image,
      egressFirewall: config.cloud.egressFirewall,
      seccompProfilePath: config.cloud.seccompProfile,
      dataDir: config.dataDir,
      homeMb: config.cloud.homeMb,
      log,
    });
  if (config.containerRuntime === 'process')
    return createProcessRuntime({
      dataDir: config.dataDir,
      allowUncapped: config.cloud.allowUncapped,
      homeMb: config.cloud.homeMb,
      log,
    });
  return createNoRuntime();
}

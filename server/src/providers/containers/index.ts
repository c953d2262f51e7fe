/** The configured container runtime (`CONTAINER_RUNTIME`): `process` (default), `docker` or `none`. */
import type { Config } from '../../config.ts';
import { createDockerRuntime } from './docker-runtime.ts';
import { createProcessRuntime } from './process-runtime.ts';
import { type ContainerRuntime, createNoRuntime } from './runtime.ts';

export * from './runtime.ts';

/** Build the runtime `config.containerRuntime` names. Nothing is contacted until first use. */
export function createContainerRuntime(
  config: Pick<Config, 'containerRuntime' | 'dockerHost' | 'dataDir' | 'cloud'>,
): ContainerRuntime {
  if (config.containerRuntime === 'docker')
    return createDockerRuntime({ dockerHost: config.dockerHost, image: config.cloud.image });
  if (config.containerRuntime === 'process') return createProcessRuntime({ dataDir: config.dataDir });
  return createNoRuntime();
}

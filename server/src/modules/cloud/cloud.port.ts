/** The agent's shell port over the cloud area: commands run inside the owner's container or not at all. */
import type { ShellPort } from '../runtime/ports.ts';
import type { CloudService } from './cloud.service.ts';

export function createShellPort({ cloud }: { cloud: Pick<CloudService, 'runCommand'> }): ShellPort {
  return {
    run: (userId, command, opts) => cloud.runCommand(userId, ['sh', '-c', command], opts),
  };
}

// The environment variables `ugs serve` reads, from the code's own definitions (the serve command's
// options and the encryption key's variable), for tests that check deployment files against them.
import { serveCommandWithOptions } from '../../src/cli/serve-options.js';
import { ENCRYPTION_KEY_VARIABLE } from '../../src/config/encryption-key.js';

/** Every UGS_ variable of `ugs serve`, each with the flag it stands for (none for the encryption key). */
export function serveVariables(): Map<string, string | undefined> {
  const options = serveCommandWithOptions().options.filter((option) => option.envVar !== undefined);
  return new Map<string, string | undefined>([
    ...options.map((option) => [option.envVar!, option.long] as [string, string | undefined]),
    [ENCRYPTION_KEY_VARIABLE, undefined],
  ]);
}

/** The default of the flag a variable stands for (`UGS_PORT` → 8080). */
export function serveDefault(variable: string): unknown {
  return serveCommandWithOptions().options.find((option) => option.envVar === variable)?.defaultValue;
}

/**
 * Node's own variable, which the container image, the systemd unit and the Kubernetes manifest set
 * beside ugs serve's: the young generation held to 16 MiB semi-spaces (docs/deployment.md#memory).
 */
export const PACKAGED_NODE_OPTIONS = '--max-semi-space-size=16';

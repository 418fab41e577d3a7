// Loading a test's configuration as the CLI would: written to `dir`/config.yaml with its `home:`
// line first, HOME and the working directory both `dir` (so `~` and relative paths resolve there).
import { loadConfig } from '../../src/config/load.js';
import type { GcConfig } from '../../src/config/types.js';
import { writeConfig } from './fixtures.js';

export function loadTestConfig(dir: string, home: string, yaml: string): Promise<GcConfig> {
  return loadConfig({ configPath: writeConfig(dir, `home: ${home}\n${yaml}`), env: { HOME: dir }, cwd: dir });
}

/**
 * How production runs Node: the environment and flags of `npm start` (package.json), which `npm run worker` and the
 * systemd units repeat (a test keeps them the same). The bench and the cluster test start their servers with these,
 * so that what they measure and test is the server as deployed, not as a bare `node server/main.ts` runs it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ProductionCommand {
  /** Variables set before `node` (`NAME=value node …`). */
  env: Record<string, string>;
  /** Node's own arguments: those between `node` and the entry script. */
  nodeArgs: string[];
}

/** The environment and node arguments of `npm start` in the package at `root`. */
export function productionCommand(root: string): ProductionCommand {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return commandOf(scripts.start);
}

/** The parts of a command line such as `NAME=value node --flag --import ./x.js server/main.ts`. */
export function commandOf(command: string): ProductionCommand {
  const words = command.trim().split(/\s+/);
  const node = words.findIndex((word) => word === 'node' || word.endsWith('/node'));
  if (node < 0) throw new Error(`"${command}" does not run node.`);
  const env = Object.fromEntries(
    words.slice(0, node).map((word) => {
      const [name, ...value] = word.split('=');
      if (value.length === 0) throw new Error(`"${word}" in "${command}" is not NAME=value.`);
      return [name, value.join('=')];
    }),
  );
  return { env, nodeArgs: words.slice(node + 1, -1) };
}

/**
 * How production runs Node: the flags of `npm start` (package.json), which the systemd units repeat (a test keeps them
 * the same). The bench and the cluster test start their servers with these flags, so that what they measure and test
 * is the server as deployed, not as a bare `node server/main.ts` runs it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Node's own arguments in `npm start` of the package at `root`: those between `node` and the entry script. */
export function productionNodeArgs(root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return nodeArgsOf(scripts.start);
}

/** Node's arguments in a command line such as `node --flag --import ./x.js server/main.ts`: those between `node` and the script. */
export function nodeArgsOf(command: string): string[] {
  const words = command.trim().split(/\s+/);
  const node = words.findIndex((word) => word === 'node' || word.endsWith('/node'));
  if (node < 0) throw new Error(`"${command}" does not run node.`);
  return words.slice(node + 1, -1);
}

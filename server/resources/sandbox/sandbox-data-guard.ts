/**
 * A sandbox hands an account to any bearer token, so it must never start on
 * data that matters. `npm run sandbox` makes a throwaway folder, but
 * `SANDBOX=true npm start` takes DATA_DIR as it is, `./data` by default: the
 * very folder of a real deployment. This guard lets a sandbox start only on
 * an empty folder, which it marks as its own, or on a folder it marked
 * before. Anything else (a database, files, a folder of another sandbox
 * unmarked) stops the start with a message that says why.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file that marks a data folder as a sandbox's, written when a sandbox first starts on an empty one. */
export const SANDBOX_MARKER = 'SANDBOX';

export class SandboxOnRealDataError extends Error {
  constructor(dataDir: string, entries: string[]) {
    super(
      `SANDBOX=true refuses to start on ${dataDir}: that folder holds data that is not a sandbox's (${entries.slice(0, 5).join(', ')}${entries.length > 5 ? ', …' : ''}). ` +
        'A sandbox gives an account to any token, so it starts only on an empty folder, which it marks as its own: run npm run sandbox, which makes one, or set DATA_DIR to an empty folder.',
    );
    this.name = 'SandboxOnRealDataError';
  }
}

/** Lets a sandbox start on `dataDir` (marking it when empty), or throws SandboxOnRealDataError. */
export function claimSandboxDataDir(dataDir: string, mode: number): void {
  if (existsSync(join(dataDir, SANDBOX_MARKER))) return;
  mkdirSync(dataDir, { recursive: true, mode });
  const entries = readdirSync(dataDir);
  if (entries.length > 0) throw new SandboxOnRealDataError(dataDir, entries);
  writeFileSync(join(dataDir, SANDBOX_MARKER), 'This folder belongs to an Audio Share sandbox: everything in it is throwaway data.\n', { mode: 0o600 });
}

/**
 * `npm run sandbox`: the real server in sandbox mode, for partners (see
 * resources/sandbox/sandbox-service.ts and the README's "Sandbox"). It makes
 * a throwaway database and folder, removed when it stops; any bearer token
 * gets an account of its own with a demo project; webhooks may target
 * localhost (WEBHOOK_ALLOW_PRIVATE). It refuses the settings of a real
 * deployment, so that it can never be pointed at data that matters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const refused = ['DATABASE_URL', 'DATA_DIR', 'BLOB_STORE', 'S3_BUCKET'].filter((name) => process.env[name]);
if (refused.length > 0) {
  console.error(`npm run sandbox keeps its data in a throwaway folder of its own; unset ${refused.join(', ')} to start it.`);
  process.exit(2);
}
const dataDir = mkdtempSync(join(tmpdir(), 'audio-share-sandbox-'));
process.on('exit', () => rmSync(dataDir, { recursive: true, force: true }));
Object.assign(process.env, {
  SANDBOX: 'true',
  DATA_DIR: dataDir,
  // The demo is analysed by the server itself, before a new token's first request goes on.
  PROCESSING: 'in-process',
  // Partners point webhooks at their own machine.
  WEBHOOK_ALLOW_PRIVATE: process.env.WEBHOOK_ALLOW_PRIVATE ?? 'true',
  PORT: process.env.PORT ?? '8090',
});
await import('./main.ts');

/** `npm start`: the server, configured from the environment (see config.ts and the README). */
import { join } from 'node:path';
import { adminTokenCommand, describeDatabase } from './admin/admin-command.ts';
import { loadConfigOrExit } from './config.ts';
import { startServer } from './server.ts';

const config = loadConfigOrExit();

const server = await startServer(config);
// The address first: it is what a newcomer looks for. Then the one command they need
// next, for this very configuration, so that the token it mints is one this server knows.
const token = adminTokenCommand(config, process.env);
console.error(
  [
    `Audio Share is listening at ${server.address} (public URL ${config.publicUrl}).`,
    `  Token: ${token.command}`,
    ...(token.passwordHidden ? ['         (add the password of DATABASE_URL to the URL; it is not printed here)'] : []),
    `  API:   ${config.publicUrl}/api/v1`,
    `  Docs:  ${config.publicUrl}/docs`,
    `  Data:  ${describeDatabase(config)}; files in ${join(config.dataDir, 'blobs')}`,
  ].join('\n'),
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    console.error(`${signal}: finishing requests under way (at most ${config.shutdownGraceMs / 1000} s), then stopping.`);
    await server.close();
    process.exit(0);
  });
}

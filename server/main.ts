/** `npm start`: the server, configured from the environment (see config.ts and the README). */
import { loadConfigOrExit } from './config.ts';
import { startServer } from './server.ts';

const config = loadConfigOrExit();

const server = await startServer(config);
const store = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `SQLite in ${config.dataDir}`;
console.error(`Audio Share is listening at ${server.address} (public URL ${config.publicUrl}), storing data in ${store} and files in ${config.dataDir}/blobs.
  API:   ${config.publicUrl}/api/v1
  Docs:  ${config.publicUrl}/docs
  Token: npm run --silent admin -- token create --email you@example.com`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    console.error(`${signal}: finishing requests under way (at most ${config.shutdownGraceMs / 1000} s), then stopping.`);
    await server.close();
    process.exit(0);
  });
}

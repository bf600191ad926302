/**
 * `npm run worker`: runs audio jobs without serving HTTP, for deployments
 * that keep processing apart from the API (set PROCESSING=external on the
 * servers). Several can run at once against PostgreSQL; WORKER_CONCURRENCY
 * sets how many jobs each runs in parallel.
 */
import { loadConfigOrExit } from './config.ts';
import { createContext } from './server.ts';
import { startAudioWorker } from './audio/audio-worker.ts';

const config = loadConfigOrExit();
const ctx = await createContext(config);
const worker = await startAudioWorker(ctx);
if (!worker) {
  await ctx.store.close();
  process.exit(1);
}
console.error(`Audio worker ${worker.id} is running (${config.workerConcurrency} at a time) on ${config.databaseUrl ? 'PostgreSQL' : `SQLite in ${config.dataDir}`}.`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    console.error(`${signal}: finishing the jobs under way, then stopping.`);
    await worker.stop();
    await ctx.store.close();
    process.exit(0);
  });
}

/**
 * Baseline for the request path's stages (issue 28, the bench's `stages` part): bare Express answering the player
 * body with res.json, as bare-express.ts does, with the first BENCH_STAGES stages of the server's API path in front,
 * cumulatively, each the server's own middleware:
 *
 *   1  the one match (server/http/route.ts, routeOperations);
 *   2  + authentication (server/http/auth.ts, authenticate) over the real token store, SQLite in DATA_DIR, whose
 *        bench user's token the bench mints with the admin CLI once this runs;
 *   3  + validation (the server's request validators compiled per operation, server/http/validation/, fed the
 *        match; validationStage below).
 *
 * The API is a router under /api/v1, as in the server (server/app.ts). No log, no security headers, no rate limit,
 * no handler: the real server is the fourth stage. Otherwise as bare-express.ts (its defaults, a weak ETag included),
 * so that each stage differs from the one before by its own middleware alone.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import express from 'express';
import { routeOperations } from '../../server/http/route.ts';
import { authenticate } from '../../server/http/auth.ts';
import { requestValidatorsOf, validateRequests } from '../../server/http/validation/request-validator.ts';
import { openStore } from '../../server/repositories.ts';

const stages = Number(process.env.BENCH_STAGES);
if (![1, 2, 3].includes(stages)) throw new Error(`BENCH_STAGES must be 1, 2 or 3, not ${process.env.BENCH_STAGES}`);
const bodies = JSON.parse(readFileSync(process.env.BENCH_BODIES!, 'utf8'));
const store = stages >= 2 ? await openStore({ dataDir: process.env.DATA_DIR! }) : undefined;

/**
 * The validation stage: the validator the server runs, as it runs it. One function, so that when the server's own
 * validator (server/http/validation/) takes over, this stage follows it by one line here.
 */
function validationStage(): express.RequestHandler[] {
  return [validateRequests(requestValidatorsOf(resolve(import.meta.dirname, '../../generated/openapi.json')))];
}

const app = express();
app.get('/healthz', (_req, res) => res.json({ status: 'ok' }));
const api = express.Router();
api.use(routeOperations());
// Tokens only, as the server takes them (its sessions are not looked at for a request with a bearer token).
if (store) api.use(authenticate({ tokens: store.tokens }));
if (stages >= 3) api.use(validationStage());
api.get('/players/:playerid', (_req, res) => res.json(bodies.player));
app.use('/api/v1', api);
// A refusal (no operation, a bad token) is a status and a line, never a 200: the bench counts non-2xx as failures.
app.use((error: { status?: number; message?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
  res.status(error.status ?? 500).json({ detail: error.message });
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(async () => {
  await store?.close();
  process.exit(0);
}));

/**
 * Baseline for the small read's ceiling: bare Express with what the architecture puts on every API request,
 * the request path's one match (server/http/route.ts) and express-openapi-validator on generated/openapi.json,
 * fed that match, with the server's request options, answering the same player body with res.json. No token, no database, no log, no
 * security headers: what the server spends beyond this is ours to cut; what this spends beyond bare Express is the
 * validator's, which the architecture prescribes (README: every request validated), so its ratio to bare Express is
 * the ceiling of the small read's (issue 23).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { routeOperations } from '../../server/http/route.ts';
import { feedValidatorTheMatch } from '../../server/http/validator-match.ts';

const bodies = JSON.parse(readFileSync(process.env.BENCH_BODIES!, 'utf8'));
feedValidatorTheMatch();
// Otherwise as bare-express.ts (its defaults, a weak ETag included), so that the two differ by the validator alone.
const app = express();
app.get('/healthz', (_req, res) => res.json({ status: 'ok' }));
const api = express.Router();
api.use(routeOperations());
api.use(
  OpenApiValidator.middleware({
    apiSpec: resolve(import.meta.dirname, '../../generated/openapi.json'),
    validateRequests: { allowUnknownQueryParameters: false, allErrors: true },
    validateResponses: false,
    validateSecurity: false,
    fileUploader: false,
  }),
);
api.get('/players/:playerid', (_req, res) => res.json(bodies.player));
app.use('/api/v1', api);
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));

/**
 * Baseline for reads: bare Express answering with res.json, nothing else.
 * It answers the very bodies the real server gave (read from BENCH_BODIES),
 * so both serialise the same JSON: a player, a project's 1,000 boxes, and
 * a listener's view of a player of 200 tracks (with the view's
 * Cache-Control header, so the two answers carry the same headers too).
 */
import { readFileSync } from 'node:fs';
import express from 'express';

const bodies = JSON.parse(readFileSync(process.env.BENCH_BODIES!, 'utf8'));
const app = express();
app.get('/healthz', (_req, res) => res.json({ status: 'ok' }));
app.get('/players/:id', (_req, res) => res.json(bodies.player));
app.get('/projects/:id/all', (_req, res) => res.json(bodies.all));
app.get('/players/:id/view', (_req, res) => res.set('Cache-Control', 'private, no-store').json(bodies.view));
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));

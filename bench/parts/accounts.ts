/**
 * The bench's `accounts` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in accounts.md beside this file and written into the README by `npm run bench:readme`.
 */
import { ARGON2_OPTIONS } from '../../server/auth/passwords.ts';
import { benchPassword, seed } from '../lib/accounts.ts';
import { ratio } from '../lib/figures.ts';
import { load } from '../lib/load.ts';
import { oauthAccessToken } from '../oauth-token.ts';
import { start } from '../lib/servers.ts';
import { rounds } from '../lib/settings.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say }: PartContext): Promise<void> {
  // The accounts rules: "a password sign-in's server time (argon2id's cost stated), and what a session lookup adds to
  // GET /players/:id against a token". One server; the bench user gets a password through the store, as the setup
  // page would give one.
  const server = await start('server/main.ts', { VALIDATE_RESPONSES: 'false' });
  const { token, playerid } = await seed(server);
  const password = await benchPassword(server);
  const signIn = () =>
    fetch(`${server.url}/api/v1/auth/signin`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: server.url }, body: JSON.stringify({ email: 'bench@example.com', password }) });
  const timings: number[] = [];
  let cookie = '';
  for (let i = 0; i < 60; i++) {
    const started = process.hrtime.bigint();
    const response = await signIn();
    timings.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (response.status !== 200) throw new Error(`sign-in answered ${response.status}`);
    cookie = response.headers.getSetCookie()[0].split(';')[0];
  }
  timings.sort((a, b) => a - b);
  say(
    `password sign-in (argon2id m=${ARGON2_OPTIONS.memoryCost / 1024} MiB, t=${ARGON2_OPTIONS.timeCost}, p=${ARGON2_OPTIONS.parallelism}), one at a time: ` +
      `median ${timings[30].toFixed(1)} ms, p90 ${timings[54].toFixed(1)} ms`,
  );
  // OAuth's rules (issue 22): "the token check's cost on GET /players/:id against today's bearer token". The same
  // read with an OAuth access token (from a real grant, players:read only), in the same run, alternating.
  const oauthToken = await oauthAccessToken(server.url, cookie, 'players:read');
  const url = `${server.url}/api/v1/players/${playerid}`;
  const byToken: Array<{ rps: number; p99: number }> = [];
  const byOAuth: Array<{ rps: number; p99: number }> = [];
  const bySession: Array<{ rps: number; p99: number }> = [];
  for (let round = 0; round < rounds; round++) {
    byToken.push(await load(url, { Authorization: `Bearer ${token}` }));
    byOAuth.push(await load(url, { Authorization: `Bearer ${oauthToken}` }));
    bySession.push(await load(url, { Cookie: cookie }));
  }
  await server.stop();
  const runMedian = (runs: Array<{ rps: number; p99: number }>, key: 'rps' | 'p99') => runs.map((run) => run[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const tokenRps = runMedian(byToken, 'rps');
  say(
    `GET /players/:id with a personal token ${tokenRps.toFixed(0)} req/s, p99 ${runMedian(byToken, 'p99')} ms; ` +
      `with an OAuth access token ${runMedian(byOAuth, 'rps').toFixed(0)} req/s, p99 ${runMedian(byOAuth, 'p99')} ms (OAuth/token ${ratio(runMedian(byOAuth, 'rps'), tokenRps)}×); ` +
      `with a session cookie ${runMedian(bySession, 'rps').toFixed(0)} req/s, p99 ${runMedian(bySession, 'p99')} ms (session/token ${ratio(runMedian(bySession, 'rps'), tokenRps)}×)`,
  );
}

export const part: BenchPart = {
  name: 'accounts',
  title: 'Accounts',
  summary: 'a password sign-in\'s server time; GET /players/:id with a personal token, an OAuth access token and a session cookie, alternating, as ratios to the personal token.',
  readme: new URL('./accounts.md', import.meta.url),
  run,
};

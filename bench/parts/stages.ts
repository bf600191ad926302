/**
 * The bench's `stages` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in stages.md beside this file and written into the README by `npm run bench:readme`.
 */
import autocannon from 'autocannon';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchToken } from '../lib/accounts.ts';
import { medianOf, ratio } from '../lib/figures.ts';
import { cpuSeconds } from '../lib/proc.ts';
import { serverRoot, start, type Started } from '../lib/servers.ts';
import { OWN_STAGES, STAGES, type Stage, stageMicroseconds, stageSamples } from '../lib/stage-profile.ts';
import { readProfile } from '../profile-top.ts';
import { rounds } from '../lib/settings.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

/** Issue 32: the small read's CPU per request, the whole server's. */
const REQUEST_TARGET_US = 110;
/** Issue 32: of that, our own stages at most half (the framework, Node and Express, the other half). */
const OWN_TARGET_US = REQUEST_TARGET_US / 2;
/** Issue 32: the validation stage's. */
const VALIDATION_TARGET_US = 8;

async function run({ say }: PartContext): Promise<void> {
  // Issue 28: "the request path's cost stage by stage (match, authentication, validation, handler) as CPU microseconds
  // per request beside bare Express". GET /players/:id with a personal token, on bare Express (the player body), on
  // bench/baselines/staged-express.ts with the API path's first 1, 2 and 3 stages in front of the same answer (the one
  // match; + authentication over a real SQLite token store; + the validator fed the match), and on the real server
  // (+ the handler, and everything else the server does for a request: its log line, security headers, rate limiter,
  // idempotency). What is measured is the CPU each process spent (user + system, /proc/PID/stat, all its threads, the
  // garbage collector's included) over a fixed number of requests, which the machine's other load changes far less
  // than throughput. BENCH_STAGES_BEFORE names another checkout (a worktree of an older commit): its server is measured
  // too, in the same rounds, for a before and after in one run (several, separated by commas).
  const amount = Number(process.env.BENCH_STAGES_REQUESTS ?? 20_000);
  const rate = Number(process.env.BENCH_STAGES_RATE ?? 0);
  const befores = (process.env.BENCH_STAGES_BEFORE ?? '').split(',').filter(Boolean).map((tree) => resolve(tree));
  const loadAverage = () => loadavg().map((load) => load.toFixed(2)).join(', ');
  const loadAtStart = loadAverage();
  // A token, a project and its player, through the API: no boxes, which GET /players/:id does not read.
  const seedPlayer = async (server: Started) => {
    const token = await benchToken(server);
    const post = async (path: string, body: unknown) => {
      const answer = await fetch(`${server.url}/api/v1${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      if (!answer.ok) throw new Error(`POST ${path} answered ${answer.status}: ${await answer.text()}`);
      return (await answer.json()) as { id: string };
    };
    const project = await post('/projects', { name: 'Bench' });
    const player = await post('/players', { name: 'Bench', projectid: project.id });
    return { token, url: `${server.url}/api/v1/players/${player.id}` };
  };
  const server = await start('server/main.ts', { VALIDATE_RESPONSES: 'false' });
  const real = await seedPlayer(server);
  const answer = await fetch(real.url, { headers: { Authorization: `Bearer ${real.token}` } });
  if (answer.status !== 200) throw new Error(`GET /players/:id answered ${answer.status}`);
  const player = (await answer.json()) as { id: string };
  const bodiesFile = join(mkdtempSync(join(tmpdir(), 'bench-bodies-')), 'bodies.json');
  writeFileSync(bodiesFile, JSON.stringify({ player }));
  type Target = { name: string; server: Started; url: string; headers: Record<string, string> };
  const targets: Target[] = [];
  const bare = await start('bench/baselines/bare-express.ts', { BENCH_BODIES: bodiesFile });
  // The same Authorization header on every request, which bare Express and the match alone do not read.
  const bearer = { Authorization: `Bearer ${real.token}` };
  targets.push({ name: 'bare Express', server: bare, url: `${bare.url}/players/${player.id}`, headers: bearer });
  for (const [stages, name] of [[1, '+ the match'], [2, '+ authentication'], [3, '+ validation']] as const) {
    const staged = await start('bench/baselines/staged-express.ts', { BENCH_BODIES: bodiesFile, BENCH_STAGES: String(stages) });
    // From stage 2 the token must be one of its own store's: minted by the admin CLI in its data folder.
    const headers = stages >= 2 ? { Authorization: `Bearer ${await benchToken(staged)}` } : bearer;
    targets.push({ name, server: staged, url: `${staged.url}/api/v1/players/${player.id}`, headers });
  }
  targets.push({ name: '+ the handler (the server)', server, url: real.url, headers: bearer });
  for (const before of befores) {
    const old = await start('server/main.ts', { VALIDATE_RESPONSES: 'false' }, true, before);
    const seeded = await seedPlayer(old);
    const commit = spawnSync('git', ['-C', before, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
    targets.push({ name: `the server at ${commit || before}`, server: old, url: seeded.url, headers: { Authorization: `Bearer ${seeded.token}` } });
  }
  // The CPU one process spent on `amount` requests (50 connections, as the reads; at most BENCH_STAGES_RATE a second
  // when set), in µs per request. No rate is given: autocannon ends a run with a fixed amount on its next 1-second
  // tick, so the wall time is whole seconds (the CPU of the idle rest, a few timers, is within the figures' noise).
  const cpuPerRequest = async (target: Target) => {
    const pid = target.server.child.pid!;
    const cpuBefore = cpuSeconds(pid);
    const result = await autocannon({ url: target.url, connections: 50, amount, headers: target.headers, ...(rate > 0 ? { overallRate: rate } : {}) });
    const cpu = cpuSeconds(pid) - cpuBefore;
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.name}, ${target.url}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
    return (cpu * 1e6) / result.requests.total;
  };
  // One warm-up run each, as long as a round (with a tenth of it, the first round still came out a third higher:
  // the JIT), then the rounds alternate between the servers.
  for (const target of targets) await cpuPerRequest(target);
  const samples = new Map<Target, number[]>(targets.map((target) => [target, []]));
  for (let round = 0; round < rounds; round++) for (const target of targets) samples.get(target)!.push(await cpuPerRequest(target));
  await Promise.all(targets.map((target) => target.server.stop()));
  rmSync(join(bodiesFile, '..'), { recursive: true, force: true });
  const figures = targets.map((target) => ({ target, us: medianOf(samples.get(target)!) }));
  const bareUs = figures[0].us;
  say(
    `GET /players/:id with a personal token, the request path stage by stage: server CPU per request (user + system), median of ${rounds} rounds of ${amount.toLocaleString('en')} requests ` +
      `(50 connections${rate > 0 ? `, ${rate} a second` : ''}; load average ${loadAtStart} at the start, ${loadAverage()} at the end)`,
  );
  figures.forEach(({ target, us }, i) => {
    // Each stage's own cost: the difference to the one before it (the server before is beside the server, not a stage).
    const added = i > 0 && i <= 4 ? `, the stage ${(us - figures[i - 1].us).toFixed(1)} µs` : i > 4 ? `, ${ratio(us, figures[4].us)}× the server` : '';
    say(`  ${target.name.padEnd(28)} ${us.toFixed(1).padStart(7)} µs (${ratio(us, bareUs)}× bare${added}; rounds ${samples.get(target)!.map((run) => run.toFixed(1)).join(', ')} µs)`);
  });

  // Issue 32: "CPU µs per request for each stage: match, authentication, validation, handler (store reads),
  // serialisation, log, headers". The staged baselines above give each stage's cost as a difference between processes;
  // this splits the real server's own CPU by stage. One more server, started with --cpu-prof, takes the same load (a
  // warm-up run, then BENCH_ROUNDS runs of the same amount); the samples taken during those runs are summed by stage
  // (bench/lib/stage-profile.ts), and each stage's share of the busy ones is multiplied by the CPU per request of the
  // unprofiled server measured above: the profiler's own cost stays out of the figures, and the threads the profile
  // does not sample (the garbage collector's helpers, libuv's) are shared out as the main thread's time is.
  const interval = Number(process.env.BENCH_STAGES_PROFILE_INTERVAL ?? 250);
  const profileDir = mkdtempSync(join(tmpdir(), 'bench-stages-profile-'));
  const profiled = await start('server/main.ts', { VALIDATE_RESPONSES: 'false' }, true, serverRoot, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-interval=${interval}`]);
  const seededProfiled = await seedPlayer(profiled);
  const profiledTarget: Target = { name: 'the server, profiled', server: profiled, url: seededProfiled.url, headers: { Authorization: `Bearer ${seededProfiled.token}` } };
  await cpuPerRequest(profiledTarget);
  // The profile's clock is the monotonic one process.hrtime reads, in every process: the window is this process's.
  const now = () => Number(process.hrtime.bigint() / 1000n);
  const from = now();
  const profiledRuns: number[] = [];
  for (let round = 0; round < rounds; round++) profiledRuns.push(await cpuPerRequest(profiledTarget));
  const to = now();
  // The profile is written as the process exits.
  await profiled.stop();
  // One file per thread (CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile): the main thread's is thread 0.
  const profileFile = readdirSync(profileDir).find((file) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(file));
  if (!profileFile) throw new Error(`no CPU profile of the server's main thread in ${profileDir}: ${readdirSync(profileDir).join(', ')}`);
  // Kept, and named below, for a closer look: node bench/profile-top.ts <file> gives its top frames.
  const profilePath = join(profileDir, profileFile);
  const sampled = stageSamples(readProfile(profilePath), profiled.tree, { from, to });
  if (sampled.busy === 0) throw new Error(`the server's CPU profile has no busy sample between ${from} and ${to} µs: its clock is not this process's`);
  const serverUs = figures.find(({ target }) => target.server === server)!.us;
  const us = stageMicroseconds(sampled, serverUs);
  const percent = (stage: Stage) => (100 * sampled.counts[stage]) / sampled.busy;
  say(
    `GET /players/:id with a personal token, the server's CPU per request by stage: a CPU profile (--cpu-prof, a sample every ${interval} µs) of one more server under the same load, ` +
      `${rounds} run${rounds === 1 ? '' : 's'} after a warm-up, ${sampled.busy.toLocaleString('en')} busy samples (${sampled.idle.toLocaleString('en')} idle left out); ` +
      `each stage's share of them × the server's ${serverUs.toFixed(1)} µs (the profiled server spent ${medianOf(profiledRuns).toFixed(1)} µs a request, the profiler's cost included; ` +
      `the profile: ${profilePath})`,
  );
  const labels: Record<Stage, string> = {
    match: 'match',
    authentication: 'authentication',
    validation: 'validation',
    handler: 'handler (store reads)',
    serialisation: 'serialisation',
    log: 'log',
    headers: 'headers',
    'rest of server': 'the rest of server/',
    framework: "framework (Node, Express's router, GC)",
  };
  for (const stage of STAGES) say(`  ${labels[stage].padEnd(40)} ${us[stage].toFixed(1).padStart(6)} µs (${percent(stage).toFixed(1).padStart(4)} %)`);
  // The issue's targets, printed as the others are; a miss does not fail the run (a profile's shares are estimates).
  const met = (yes: boolean) => (yes ? 'met' : 'MISSED');
  say(`  validation stage: ${us.validation.toFixed(1)} µs a request (target ≤ ${VALIDATION_TARGET_US} µs: ${met(us.validation <= VALIDATION_TARGET_US)})`);
  const own = OWN_STAGES.reduce((sum, stage) => sum + us[stage], 0);
  say(
    `  our own stages together (all but the framework): ${own.toFixed(1)} µs a request ` +
      `(target ≤ ${OWN_TARGET_US} µs, half of ${REQUEST_TARGET_US} µs: ${met(own <= OWN_TARGET_US)})`,
  );
}

export const part: BenchPart = {
  name: 'stages',
  title: 'The request path, stage by stage',
  summary: 'GET /players/:id with a personal token, the request path stage by stage (issue 28): the CPU each process spends per request, on bare Express answering the player body, then with the one match, + authentication (a SQLite token store), + validation (bench/baselines/staged-express.ts), + the handler (the real server); ratios to bare Express; then the real server\'s own CPU by stage, from a CPU profile under the same load. BENCH_STAGES_BEFORE names checkouts of older commits (comma-separated) whose servers are measured in the same rounds.',
  readme: new URL('./stages.md', import.meta.url),
  run,
};

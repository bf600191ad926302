/**
 * The bench's `listings` part. What it measures, and how, is its paragraph of bench/README.md's list of parts,
 * kept in listings.md beside this file and written into the README by `npm run bench:readme`.
 */
import { spawn } from 'node:child_process';
import { newId } from '../../server/lib/ids.ts';
import { openStore } from '../../server/repositories.ts';
import { makePlayers } from '../../server/testing/listings-data.ts';
import { analysedTake, makeBigProject } from '../../server/testing/studio-data.ts';
import { medianOf } from '../lib/figures.ts';
import { load } from '../lib/load.ts';
import { cpuSeconds } from '../lib/proc.ts';
import { serverArgs, serverNode, serverRoot, start } from '../lib/servers.ts';
import { rounds, seconds } from '../lib/settings.ts';
import type { BenchPart, PartContext } from '../lib/part.ts';

async function run({ say, failures }: PartContext): Promise<void> {
  // The issue's target: "paged listings (limit=100) of 1k, 10k and 100k items: p99 flat: the 100k one within 1.5× of
  // the 1k one", at the scale "a project of 100,000 boxes and an account with 10,000 players, made through the store's
  // batch paths, listed with and without paging". One server; projects of 1,000, 10,000 and 100,000 boxes in the bench
  // account, and accounts of 1,000 and 10,000 players, each made in one transaction of multi-row INSERTs
  // (server/testing/). Every project begins alike, so that a page holds the same boxes at every size and only the
  // size differs: 5 folders of 10 tracks, 15 stacks of three versions, then one-version tracks (a stack and its file)
  // to the size. For each listing: the first page (folders, stacks and their children), and a page deep inside (the
  // cursor of the fourth page, reached through three Link next URLs: tracks' stacks), p99 at 10 connections; and the
  // whole list, unpaged, one request timed.
  const boxSizes = [1_000, 10_000, 100_000];
  const playerSizes = [1_000, 10_000];
  const pageLimit = 100;
  const nextLinksFollowed = 3;
  const analysed = await analysedTake();
  const server = await start('server/main.ts', { VALIDATE_RESPONSES: 'false', PROCESSING: 'external' });
  /** A token of the account `email`, made if need be by the admin CLI, as benchToken makes the bench account's. */
  const tokenOf = (email: string) =>
    new Promise<string>((done, fail) => {
      const admin = spawn(serverNode, [...serverArgs('server/admin/cli.ts'), 'token', 'create', '--email', email], { cwd: serverRoot, env: { ...process.env, DATA_DIR: server.dataDir, DATABASE_URL: '' } });
      let out = '';
      admin.stdout.on('data', (d) => (out += d));
      admin.on('exit', (code) => (code === 0 ? done(out.trim()) : fail(new Error('admin failed'))));
    });
  const listings: Array<{ what: string; size: number; path: string; headers: Record<string, string> }> = [];
  const benchHeaders = { Authorization: `Bearer ${await tokenOf('bench@example.com')}` };
  const playerTokens = await Promise.all(playerSizes.map((size) => tokenOf(`listings-${size}@example.com`)));
  const made = performance.now();
  const store = await openStore({ dataDir: server.dataDir });
  const benchUser = (await store.users.findByEmail('bench@example.com'))!;
  for (const size of boxSizes) {
    const { projectId } = await makeBigProject(store, benchUser.id, size, analysed, { folders: 5, stacks: 15 });
    listings.push({ what: 'boxes', size, path: `/projects/${projectId}/all`, headers: benchHeaders });
  }
  for (const [index, size] of playerSizes.entries()) {
    const owner = (await store.users.findByEmail(`listings-${size}@example.com`))!;
    const projectId = newId('prj');
    await store.projects.insert({ id: projectId, ownerId: owner.id, name: `${size} players`, color: '#3b82f6', sortBy: null, artworkId: null, timeCreated: Date.now(), timeModified: Date.now() });
    await makePlayers(store, owner.id, projectId, size);
    listings.push({ what: 'players', size, path: '/players', headers: { Authorization: `Bearer ${playerTokens[index]}` } });
  }
  await store.close();
  // The inserts above held this process's event loop for seconds (better-sqlite3 is synchronous), long enough for the
  // server to close the idle keep-alive connection of the health checks; one turn of the loop lets fetch see it closed
  // instead of sending the next request down it ("other side closed").
  await new Promise((turned) => setImmediate(turned));
  say(`listings data: projects of ${boxSizes.map((size) => size.toLocaleString('en')).join(', ')} boxes and accounts of ${playerSizes.map((size) => size.toLocaleString('en')).join(', ')} players, made through the store's batch paths in ${((performance.now() - made) / 1000).toFixed(1)} s`);

  const api = `${server.url}/api/v1`;
  const nextOf = (response: Response) => /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
  // One request of another list first: the server's first request compiles the routes and the validator's schemas,
  // which would land on the first timing.
  await (await fetch(`${api}/projects`, { headers: benchHeaders })).arrayBuffer();
  const targets = [];
  for (const listing of listings) {
    // The whole list first, before any page of it was asked for: the listing of boxes is then not in its cache.
    const started = performance.now();
    const whole = await fetch(`${api}${listing.path}`, { headers: listing.headers });
    const items = ((await whole.json()) as unknown[]).length;
    const unpagedMs = performance.now() - started;
    if (whole.status !== 200) throw new Error(`${listing.path} answered ${whole.status}`);
    const first = `${api}${listing.path}?limit=${pageLimit}`;
    let deep = first;
    for (let followed = 0; followed < nextLinksFollowed; followed++) {
      const response = await fetch(deep, { headers: listing.headers });
      await response.arrayBuffer();
      const next = nextOf(response);
      if (response.status !== 200 || !next) throw new Error(`${deep} answered ${response.status} with no next link`);
      deep = next;
    }
    targets.push({ ...listing, first, deep, unpagedMs, items });
  }
  // A run in which no request was answered has no latencies: autocannon's p99 is then 0, which would pass for fast.
  const p99Of = (run: { rps: number; p99: number }) => (run.rps > 0 ? run.p99 : Number.POSITIVE_INFINITY);
  // Beside each p99, the server's CPU time per request, which other load on the machine changes far less than latency.
  const pid = server.child.pid!;
  const loadWithCpu = async (url: string, headers: Record<string, string>) => {
    const cpuBefore = cpuSeconds(pid);
    const run = await load(url, headers, 10);
    return { ...run, cpuMs: run.rps > 0 ? ((cpuSeconds(pid) - cpuBefore) * 1000) / (run.rps * seconds) : Number.POSITIVE_INFINITY };
  };
  const samples = targets.map(() => ({ first: [] as number[], deep: [] as number[], rps: [] as number[], firstCpu: [] as number[], deepCpu: [] as number[] }));
  for (let round = 0; round < rounds; round++) {
    for (const [index, target] of targets.entries()) {
      const first = await loadWithCpu(target.first, target.headers);
      const deep = await loadWithCpu(target.deep, target.headers);
      samples[index].first.push(p99Of(first));
      samples[index].deep.push(p99Of(deep));
      samples[index].rps.push(first.rps);
      samples[index].firstCpu.push(first.cpuMs);
      samples[index].deepCpu.push(deep.cpuMs);
    }
  }
  await server.stop();
  const ms = (p99: number) => (Number.isFinite(p99) ? `${p99} ms` : `over ${seconds} s (no answer within the run)`);
  const p99 = targets.map((_, index) => ({
    first: medianOf(samples[index].first),
    deep: medianOf(samples[index].deep),
    rps: medianOf(samples[index].rps),
    firstCpu: medianOf(samples[index].firstCpu),
    deepCpu: medianOf(samples[index].deepCpu),
  }));
  for (const [index, target] of targets.entries()) {
    const listed = target.what === 'boxes' ? `GET /projects/:id/all, ${target.size.toLocaleString('en')} boxes` : `GET /players, ${target.size.toLocaleString('en')} players`;
    say(
      `${listed} (${target.items.toLocaleString('en')} listed): limit=${pageLimit} first page p99 ${ms(p99[index].first)} (${p99[index].rps.toFixed(0)} req/s), ` +
        `page ${nextLinksFollowed + 1} p99 ${ms(p99[index].deep)}, at 10 connections; server CPU a request ${p99[index].firstCpu.toFixed(2)} ms and ${p99[index].deepCpu.toFixed(2)} ms; ` +
        `unpaged, one request ${target.unpagedMs.toFixed(1)} ms`,
    );
  }
  // Flat: the largest listing of each kind against its 1,000, for the first page and the deep one.
  for (const what of ['boxes', 'players']) {
    const ofKind = targets.map((target, index) => ({ target, p99: p99[index] })).filter(({ target }) => target.what === what);
    const smallest = ofKind[0];
    const largest = ofKind[ofKind.length - 1];
    for (const page of ['first', 'deep'] as const) {
      const flatness = largest.p99[page] / smallest.p99[page];
      const measure = `${what} listing, ${page === 'first' ? 'first page' : `page ${nextLinksFollowed + 1}`} p99, ${largest.target.size.toLocaleString('en')} against ${smallest.target.size.toLocaleString('en')}`;
      say(`${measure}: ${flatness.toFixed(2)}× (${ms(largest.p99[page])} against ${ms(smallest.p99[page])}) (target ≤ 1.5×: ${flatness <= 1.5 ? 'met' : 'MISSED'})`);
      if (!(flatness <= 1.5)) failures.push(`${measure}: ${flatness.toFixed(2)}×, target ≤ 1.5×`);
    }
  }
}

export const part: BenchPart = {
  name: 'listings',
  title: 'Listings',
  summary: 'paged listings (limit=100) of 1,000, 10,000 and 100,000 boxes (GET /projects/:id/all) and of 1,000 and 10,000 players (GET /players), made through the store\'s batch paths: p99 of the first page and of a page deep inside at 10 connections, target the largest within 1.5× of the 1,000; and each whole list unpaged, one request timed.',
  readme: new URL('./listings.md', import.meta.url),
  run,
};

/**
 * `node bench/profile-top.ts <file.cpuprofile> [count] [skip-seconds]`: the top frames of a V8 CPU profile (as
 * `--cpu-prof` writes them, see BENCH_NODE_ARGS), by self time and by total time, with their share of the samples.
 * `skip-seconds` leaves out the profile's first seconds (the server's start and the bench's seeding), so that what is
 * left is the steady state under load. bench/README.md records these before and after each optimisation.
 *
 * Its reading of a profile is exported: bench/lib/stage-profile.ts sums the same samples by stage of the request path.
 */
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
/** A .cpuprofile: `samples` are node ids, each taken `timeDeltas` µs after the one before; `startTime` is µs on the monotonic clock process.hrtime reads. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime?: number;
}

export const readProfile = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;

/** When each sample was taken, in µs of the monotonic clock (process.hrtime.bigint() / 1000 in any process of the machine). */
export function sampleTimes(profile: CpuProfile): number[] {
  let at = profile.startTime;
  return profile.timeDeltas.map((delta) => (at += delta));
}

/** Each node's parent, by id: a sample's stack is its node and the parents up to (root). */
export function parentsOf(profile: Pick<CpuProfile, 'nodes'>): Map<number, number> {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  return parent;
}

function main(): void {
  const [file, countArg, skipArg] = process.argv.slice(2);
  if (!file) throw new Error('Usage: node bench/profile-top.ts <file.cpuprofile> [count] [skip-seconds]');
  const count = Number(countArg ?? 25);
  const whole = readProfile(file);
  // timeDeltas are in microseconds, each the time since the sample before.
  let elapsed = 0;
  const skipMicroseconds = Number(skipArg ?? 0) * 1e6;
  const profile = { nodes: whole.nodes, samples: whole.samples.filter((_, i) => (elapsed += whole.timeDeltas[i]) >= skipMicroseconds) };
  const root = resolve(import.meta.dirname, '..');
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = parentsOf(profile);
  const label = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.startsWith('file://') ? relative(root, url.slice(7)).replace(/^node_modules\//, '') : url;
    return `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim();
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const idle = new Set(['(idle)', '(program)', '(garbage collector)']);
  let busy = 0;
  for (const sample of profile.samples) {
    const leaf = nodes.get(sample)!;
    const leafLabel = label(leaf);
    self.set(leafLabel, (self.get(leafLabel) ?? 0) + 1);
    if (!idle.has(leaf.callFrame.functionName)) busy++;
    // Each function counts once per sample however deep it recurses.
    const seen = new Set<string>();
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const name = label(nodes.get(id)!);
      if (!seen.has(name)) total.set(name, (total.get(name) ?? 0) + 1);
      seen.add(name);
    }
  }
  const share = (n: number) => `${((100 * n) / profile.samples.length).toFixed(1).padStart(5)} %`;
  const top = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, count);
  console.log(`${profile.samples.length} samples, ${share(busy)} not idle`);
  console.log('\nby self time');
  for (const [name, n] of top(self)) console.log(`${share(n)}  ${name}`);
  console.log('\nby total time');
  for (const [name, n] of top(total).filter(([name]) => !name.startsWith('(root)'))) console.log(`${share(n)}  ${name}`);
}

// Run as a command, it prints; imported, it only lends its reading of a profile.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();

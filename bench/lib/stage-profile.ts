/**
 * A CPU profile of the server (`node --cpu-prof`) summed by stage of the request path, for the stages part: which
 * stage each sample of the main thread was spent in, so that a stage's share of the busy samples times the CPU the
 * server spent per request (measured apart, without the profiler) is that stage's µs per request.
 *
 * A sample's stage is found by walking its stack from the leaf upwards; the first frame that belongs to a stage names
 * it. The first, not the outermost: Express calls each middleware from the one before (through next()), so the frames
 * of every earlier middleware sit above a later one's, and only the innermost is doing the work. For the same reason
 * the router's frames end the walk (what a middleware does beneath its next() is the router's, then the next
 * middleware's), and the sample is the framework's unless a store frame was passed (the handler's reads). Store
 * frames (server/store/**, and the resources' repositories, *-repository.ts, the token lookup's among them) take the
 * stage of the first stage frame above them: the handler's reads are the handler's, authentication's its own.
 *
 *   match           server/http/route.ts
 *   authentication  server/http/auth.ts, server/auth/**, and the store calls made beneath them
 *   validation      server/http/validation/**, server/http/validator-match.ts, express-openapi-validator and its Ajv
 *   handler         server/resources/**, and the store calls beneath nothing else
 *   serialisation   Express's res.json and res.send and what they do beneath them (JSON.stringify, the ETag, the
 *                   Content-Type), but for Node's HTTP writing the answer (its head, the socket), which is Node's
 *   log             server/http/request-context.ts, server/lib/logger.ts, pino and its streams
 *   headers         server/http/security-headers.ts, server/http/cors.ts
 *   rest of server  any other file of server/ (the dispatch, the rate limiter, preconditions…)
 *   framework       the rest: Node's HTTP (the parser, the answer's head and its writes to the socket), Express's
 *                   router, the garbage collector, (program)
 *
 * Frames of server/lib/ and server/signing/ (ids, clocks, problems, signatures), Node's internals, Express's request
 * and other response helpers, and other packages belong to no stage: the walk goes on to their caller. Idle samples
 * count nowhere.
 */
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CpuProfile, parentsOf, sampleTimes } from '../profile-top.ts';

export const STAGES = ['match', 'authentication', 'validation', 'handler', 'serialisation', 'log', 'headers', 'rest of server', 'framework'] as const;
export type Stage = (typeof STAGES)[number];
/** Our own stages: all but the framework's (Node and Express), which are what the server's budget is cut into. */
export const OWN_STAGES: readonly Stage[] = STAGES.filter((stage) => stage !== 'framework');

/** What a frame says of its sample: a stage, a store call (the handler's, unless a stage above claims it), the router's glue (the walk ends), or nothing (the walk goes on). */
type FrameClass = Stage | 'store' | 'router' | undefined;

/** Pino and the packages it writes through. */
const LOG_PACKAGES = new Set(['pino', 'sonic-boom', 'pino-std-serializers', 'fast-redact', 'quick-format-unescaped', 'safe-stable-stringify', 'atomic-sleep', 'thread-stream', 'on-exit-leak-free']);

/** Node's HTTP and socket modules: beneath res.send, what they do is Node writing the answer, not serialising it. */
const NODE_HTTP = /^node:(_http_\w+|net|stream|internal\/stream_base_commons|internal\/streams\/\w+)$/;

/** The package a file is in (the last node_modules/ of its path, which a linked node_modules resolves anywhere) and its path inside it. */
function packageOf(path: string): { name: string; file: string } | undefined {
  const at = path.lastIndexOf(`${sep}node_modules${sep}`);
  if (at < 0) return undefined;
  const parts = path.slice(at + 14).split(sep);
  const length = parts[0].startsWith('@') ? 2 : 1;
  return { name: parts.slice(0, length).join('/'), file: parts.slice(length).join('/') };
}

/** `tree`: the checkout the server ran from, against which its server/ files are named. */
export function classifyFrame(frame: { url: string; functionName: string }, tree: string): FrameClass {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)' || functionName === '(program)') return 'framework';
  // node: internals, V8's builtins and code compiled at run time (Ajv's validators) have no file.
  if (!url.startsWith('file://')) return undefined;
  const path = fileURLToPath(url);
  const inPackage = packageOf(path);
  if (inPackage) {
    const { name, file } = inPackage;
    if (name === 'express' && file === 'lib/response.js' && (functionName === 'json' || functionName === 'send')) return 'serialisation';
    if (name === 'express-openapi-validator' || name === 'ajv' || name === 'ajv-formats') return 'validation';
    if (LOG_PACKAGES.has(name)) return 'log';
    if (name === 'router' || (name === 'express' && file === 'lib/application.js')) return 'router';
    return undefined;
  }
  const file = relative(tree, path).split(sep).join('/');
  if (file === 'server/http/route.ts') return 'match';
  if (file === 'server/http/auth.ts' || file.startsWith('server/auth/')) return 'authentication';
  if (file.startsWith('server/http/validation/') || file === 'server/http/validator-match.ts') return 'validation';
  if (file === 'server/http/request-context.ts' || file === 'server/lib/logger.ts') return 'log';
  if (file === 'server/http/security-headers.ts' || file === 'server/http/cors.ts') return 'headers';
  if (file.startsWith('server/store/') || /^server\/resources\/.*-repository\.ts$/.test(file)) return 'store';
  if (file.startsWith('server/resources/')) return 'handler';
  if (file.startsWith('server/lib/') || file.startsWith('server/signing/')) return undefined;
  if (file.startsWith('server/')) return 'rest of server';
  return undefined;
}

/** The stage of one stack, its frames from the leaf up; undefined for an idle sample. */
export function stageOfStack(frames: Array<{ url: string; functionName: string }>, tree: string): Stage | undefined {
  if (frames[0]?.functionName === '(idle)') return undefined;
  let store = false;
  let nodeHttp = false;
  for (const frame of frames) {
    const found = classifyFrame(frame, tree);
    if (found === 'router') break;
    if (found === 'store') store = true;
    else if (found === 'serialisation' && nodeHttp) return 'framework';
    else if (found) return found;
    if (NODE_HTTP.test(frame.url)) nodeHttp = true;
  }
  return store ? 'handler' : 'framework';
}

export interface StageSamples {
  /** Samples counted: not idle, and within the window. */
  busy: number;
  /** Idle samples within the window. */
  idle: number;
  counts: Record<Stage, number>;
}

/** The samples of `profile` taken within `window` (µs of the monotonic clock, as sampleTimes gives them; all when none), by stage. */
export function stageSamples(profile: CpuProfile, tree: string, window?: { from: number; to: number }): StageSamples {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = parentsOf(profile);
  const times = sampleTimes(profile);
  // Many samples share a leaf: each node's stage is worked out once.
  const stageOfNode = new Map<number, Stage | undefined>();
  const counts = Object.fromEntries(STAGES.map((stage) => [stage, 0])) as Record<Stage, number>;
  let busy = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    if (window && (times[i] < window.from || times[i] > window.to)) return;
    if (!stageOfNode.has(id)) {
      const frames = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) frames.push(nodes.get(at)!.callFrame);
      stageOfNode.set(id, stageOfStack(frames, tree));
    }
    const stage = stageOfNode.get(id);
    if (stage === undefined) idle += 1;
    else {
      busy += 1;
      counts[stage] += 1;
    }
  });
  return { busy, idle, counts };
}

/** Each stage's µs per request: its share of the busy samples times the CPU µs a request cost (all threads, measured without the profiler). */
export function stageMicroseconds({ busy, counts }: StageSamples, usPerRequest: number): Record<Stage, number> {
  return Object.fromEntries(STAGES.map((stage) => [stage, busy > 0 ? (counts[stage] / busy) * usPerRequest : 0])) as Record<Stage, number>;
}

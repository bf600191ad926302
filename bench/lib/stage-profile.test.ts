import { describe, expect, it } from 'vitest';
import type { CpuProfile } from '../profile-top.ts';
import { stageMicroseconds, stageOfStack, stageSamples } from './stage-profile.ts';

const tree = '/srv/audio-share';
const file = (path: string) => `file://${tree}/${path}`;
// A node_modules linked from elsewhere, as a worktree's is: its files resolve outside the tree.
const pkg = (path: string) => `file:///elsewhere/node_modules/${path}`;

/**
 * A profile shaped as --cpu-prof writes it: (root) with the router dispatching to middlewares and a handler, each
 * leaf a node; sample i is taken at 1000 + 10 × (i + 1) µs.
 */
function profileOf(leaves: Array<{ stack: Array<[string, string]>; samples: number }>): CpuProfile {
  const nodes: CpuProfile['nodes'] = [{ id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [] }];
  const samples: number[] = [];
  for (const { stack, samples: count } of leaves) {
    // `stack` is listed from the root down; each frame a new node under the one before.
    let parent = nodes[0];
    for (const [functionName, url] of stack) {
      const node = { id: nodes.length + 1, callFrame: { functionName, url, lineNumber: 0 }, children: [] as number[] };
      parent.children!.push(node.id);
      nodes.push(node);
      parent = node;
    }
    for (let i = 0; i < count; i++) samples.push(parent.id);
  }
  return { nodes, samples, timeDeltas: samples.map(() => 10), startTime: 1000 };
}

const router: [string, string] = ['handle', pkg('router/lib/layer.js')];
const parser: [string, string] = ['parserOnHeadersComplete', 'node:_http_common'];

describe('stage-profile', () => {
  const profile = profileOf([
    // The match, then (through next()) the router again and the validator's Ajv code, which has no file.
    { stack: [parser, router, ['routeOperations', file('server/http/route.ts')]], samples: 4 },
    { stack: [parser, router, ['routeOperations', file('server/http/route.ts')], router, ['middleware', pkg('express-openapi-validator/dist/index.js')], ['validate', '']], samples: 6 },
    // Authentication reading the token store, through a resource's repository: the store call is authentication's.
    { stack: [['authenticate', file('server/http/auth.ts')], ['findHolder', file('server/resources/account/token-repository.ts')], ['query', file('server/store/sqlite-db.ts')], ['get', '']], samples: 10 },
    // The handler reading the player, and its answer serialised by res.json beneath it (JSON.stringify, the write).
    { stack: [router, ['getPlayer', file('server/resources/players/players-handlers.ts')], ['findById', file('server/store/sqlite/players.ts')]], samples: 20 },
    { stack: [router, ['getPlayer', file('server/resources/players/players-handlers.ts')], ['sendVersioned', file('server/http/preconditions.ts')], ['json', pkg('express/lib/response.js')], ['stringify', '']], samples: 8 },
    { stack: [['json', pkg('express/lib/response.js')], ['send', pkg('express/lib/response.js')], ['generateETag', pkg('express/lib/utils.js')], ['digest', 'node:internal/crypto/hash']], samples: 2 },
    // Node writing the answer beneath res.send: the framework's.
    { stack: [['json', pkg('express/lib/response.js')], ['send', pkg('express/lib/response.js')], ['end', 'node:_http_outgoing'], ['writeGeneric', 'node:internal/stream_base_commons']], samples: 4 },
    // The log line, written on 'close' through pino; the security headers, through res.setHeader.
    { stack: [['emit', 'node:events'], ['(anonymous)', file('server/http/request-context.ts')], ['info', file('server/lib/logger.ts')], ['write', pkg('pino/lib/proto.js')]], samples: 5 },
    { stack: [router, ['securityHeaders', file('server/http/security-headers.ts')], ['setHeader', 'node:_http_outgoing']], samples: 3 },
    // A middleware's own work beneath no stage, after its next() returned into the router: the framework's.
    { stack: [router, ['routeOperations', file('server/http/route.ts')], router, ['next', pkg('router/index.js')]], samples: 7 },
    { stack: [parser], samples: 9 },
    { stack: [['(garbage collector)', '']], samples: 6 },
    // The rate limiter, server code of no stage.
    { stack: [router, ['rateLimitByUser', file('server/http/rate-limit.ts')]], samples: 2 },
    { stack: [['(idle)', '']], samples: 18 },
  ]);

  it('gives each sample the stage of the first frame from its leaf up that belongs to one', () => {
    const { busy, idle, counts } = stageSamples(profile, tree);
    expect(idle).toBe(18);
    expect(busy).toBe(86);
    expect(counts).toEqual({
      match: 4,
      authentication: 10,
      validation: 6,
      handler: 20,
      serialisation: 10,
      log: 5,
      headers: 3,
      'rest of server': 2,
      framework: 4 + 7 + 9 + 6,
    });
  });

  it('counts only the samples within the window', () => {
    // Samples 1 to 4 (the match) are at 1010 to 1040 µs; 5 to 10 (the validator) at 1050 to 1100.
    expect(stageSamples(profile, tree, { from: 1045, to: 1100 }).counts.validation).toBe(6);
    expect(stageSamples(profile, tree, { from: 1045, to: 1100 }).busy).toBe(6);
  });

  it('turns shares of the busy samples into µs of a request', () => {
    const us = stageMicroseconds(stageSamples(profile, tree), 172);
    expect(us.handler).toBeCloseTo(40);
    expect(us.match).toBeCloseTo(8);
    expect(Object.values(us).reduce((sum, value) => sum + value, 0)).toBeCloseTo(172);
  });

  it('ends the walk at the router, and falls back to the handler only below a store frame', () => {
    expect(stageOfStack([{ functionName: 'next', url: pkg('router/index.js') }, { functionName: 'authenticate', url: file('server/http/auth.ts') }], tree)).toBe('framework');
    expect(stageOfStack([{ functionName: 'get', url: '' }, { functionName: 'find', url: file('server/store/sqlite/players.ts') }, { functionName: 'handle', url: pkg('router/lib/layer.js') }], tree)).toBe('handler');
    expect(stageOfStack([{ functionName: '(idle)', url: '' }], tree)).toBeUndefined();
  });
});

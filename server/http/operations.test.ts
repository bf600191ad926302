/**
 * Handlers are typed from the spec: each operation's path and query
 * parameters, JSON body and caller come from generated/schema.d.ts and the
 * spec's security. These are checked by tsc (`npm test -- typecheck`): a
 * `@ts-expect-error` that no longer finds its error fails type-checking, so
 * each line below proves a mistake is caught. The runtime test shows the
 * dispatcher hands each handler its own operation's request.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Caller, OperationHandlers, OperationRequest } from './operations.ts';
import type { Schemas } from '../lib/api-types.ts';

// Compiled, never called: what a handler may read of its request.
const typedHandlers: OperationHandlers = {
  createPlayer: async (req) => {
    expectTypeOf(req.body).toEqualTypeOf<Schemas['CreatePlayerRequest']>();
    expectTypeOf(req.user).toEqualTypeOf<Caller>();
    // @ts-expect-error CreatePlayerRequest has no field `nme`: a misspelt field does not compile.
    void req.body.nme;
    // @ts-expect-error createPlayer has no path parameter.
    void req.params.playerid;
  },
  getPlayer: async (req) => {
    expectTypeOf(req.params.playerid).toEqualTypeOf<string>();
    // @ts-expect-error getPlayer's path names playerid, not projectid.
    void req.params.projectid;
  },
  listPlayers: async (req) => {
    expectTypeOf(req.query.limit).toEqualTypeOf<number | undefined>();
    // @ts-expect-error listPlayers takes no query parameter `offset`.
    void req.query.offset;
  },
  getPlayerView: async (req) => {
    // A listener operation: a bearer token is optional, so there may be no caller.
    expectTypeOf(req.user).toEqualTypeOf<Caller | undefined>();
  },
  fetchSignedDownload: async (req) => {
    // A signed URL's operation takes no token: nobody is known to call it.
    expectTypeOf(req.user).toEqualTypeOf<undefined>();
  },
};

describe('typed operations', () => {
  it('type a union of operations as any one of them', () => {
    expectTypeOf<OperationRequest<'getPlayer' | 'deletePlayer'>['params']>().toEqualTypeOf<{ playerid: string }>();
  });

  it('refuse to start without exactly one handler for every operation of the table', async () => {
    const { dispatchOperations } = await import('./operations.ts');
    // Every operation of the spec must have a handler: the typed table above lacks most of them.
    expect(Object.keys(typedHandlers)).toEqual(['createPlayer', 'getPlayer', 'listPlayers', 'getPlayerView', 'fetchSignedDownload']);
    expect(() => dispatchOperations([typedHandlers])).toThrow(/^No handler for operations: .*\bupdatePlayer, .*\bdeletePlayer\b/);
    expect(() => dispatchOperations([typedHandlers, { getPlayer: async () => {} }])).toThrow('Two handlers for operation getPlayer');
  });
});

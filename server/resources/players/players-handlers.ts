import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import * as players from './players-service.ts';
import { ifMatchOf, sendVersioned } from '../../http/preconditions.ts';
import { keysetPage, pageAsked } from '../../http/paging.ts';
import { newestFirst } from '../../lib/sort-keys.ts';
import { actorOf } from '../../auth/authorize.ts';

export function playersHandlers(ctx: Context): OperationHandlers {
  return {
    listPlayers: async (req, res) => {
      // A page is read by keyset from the store; the whole list, without limit and cursor, as before paging.
      const asked = pageAsked(ctx, req, players.LIST_ORDER_KEY_SHAPE);
      if (!asked) {
        res.json(await players.listPlayers(ctx, req.user));
        return;
      }
      res.json(keysetPage(ctx, req, res, asked, await players.listPlayersPage(ctx, req.user, asked.after, asked.limit + 1), newestFirst));
    },
    createPlayer: async (req, res) => {
      sendVersioned(res, await players.createPlayer(ctx, req.user, req.body, actorOf(req.user, req.auth)));
    },
    getPlayer: async (req, res) => {
      sendVersioned(res, await players.getPlayer(ctx, req.user, req.params.playerid));
    },
    updatePlayer: async (req, res) => {
      sendVersioned(res, await players.updatePlayer(ctx, req.user, req.params.playerid, req.body, ifMatchOf(req)));
    },
    deletePlayer: async (req, res) => {
      res.json(await players.deletePlayer(ctx, req.user, req.params.playerid, ifMatchOf(req)));
    },
  };
}

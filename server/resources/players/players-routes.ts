import { Router } from 'express';
import type { Context } from '../../context.ts';
import * as players from './players-service.ts';

export function playersRoutes(ctx: Context): Router {
  return Router()
    .get('/players', async (req, res) => {
      res.json(await players.listPlayers(ctx, req.user!));
    })
    .post('/players', async (req, res) => {
      res.json(await players.createPlayer(ctx, req.user!, req.body));
    })
    .get('/players/:playerid', async (req, res) => {
      res.json(await players.getPlayer(ctx, req.user!, req.params.playerid));
    })
    .post('/players/:playerid', async (req, res) => {
      res.json(await players.updatePlayer(ctx, req.user!, req.params.playerid, req.body));
    });
}

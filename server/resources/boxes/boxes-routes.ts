import { Router } from 'express';
import type { Context } from '../../context.ts';
import * as boxes from './boxes-service.ts';

export function boxesRoutes(ctx: Context): Router {
  return Router()
    .get('/projects/:projectid/all', async (req, res) => {
      res.json(await boxes.listAll(ctx, req.user!, req.params.projectid));
    })
    .get('/projects/:projectid/folders', async (req, res) => {
      res.json(await boxes.listFolders(ctx, req.user!, req.params.projectid));
    })
    .post('/projects/:projectid/folders', async (req, res) => {
      res.json(await boxes.createFolder(ctx, req.user!, req.params.projectid, req.body));
    })
    .post('/projects/:projectid/stacks', async (req, res) => {
      res.json(await boxes.createStack(ctx, req.user!, req.params.projectid, req.body));
    })
    .get('/projects/:projectid/files/:fileid', async (req, res) => {
      res.json(await boxes.getBox(ctx, req.user!, req.params.projectid, req.params.fileid));
    })
    .post('/projects/:projectid/files/:fileid', async (req, res) => {
      res.json(await boxes.updateBox(ctx, req.user!, req.params.projectid, req.params.fileid, req.body));
    })
    .delete('/projects/:projectid/files/:fileid', async (req, res) => {
      res.json(await boxes.deleteFile(ctx, req.user!, req.params.projectid, req.params.fileid));
    });
}

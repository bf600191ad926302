import { Router } from 'express';
import type { Context } from '../../context.ts';
import { createProject, getProject, listProjects, updateProject } from './projects-service.ts';

export function projectsRoutes(ctx: Context): Router {
  return Router()
    .get('/projects', async (req, res) => {
      res.json(await listProjects(ctx, req.user!));
    })
    .post('/projects', async (req, res) => {
      res.json(await createProject(ctx, req.user!, req.body));
    })
    .get('/projects/:projectid', async (req, res) => {
      res.json(await getProject(ctx, req.user!, req.params.projectid));
    })
    .post('/projects/:projectid', async (req, res) => {
      res.json(await updateProject(ctx, req.user!, req.params.projectid, req.body));
    });
}

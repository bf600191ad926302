import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { createProject, deleteProject, getProject, listProjects, updateProject } from './projects-service.ts';
import { ifMatchOf, sendVersioned } from '../../http/preconditions.ts';
import { pageOf } from '../../http/paging.ts';

export function projectsHandlers(ctx: Context): OperationHandlers {
  return {
    listProjects: async (req, res) => {
      res.json(await listProjects(ctx, req.user, req.query, (items, keyOf) => pageOf(ctx, req, res, items, keyOf)));
    },
    createProject: async (req, res) => {
      sendVersioned(res, await createProject(ctx, req.user, req.body));
    },
    getProject: async (req, res) => {
      sendVersioned(res, await getProject(ctx, req.user, req.params.projectid));
    },
    updateProject: async (req, res) => {
      sendVersioned(res, await updateProject(ctx, req.user, req.params.projectid, req.body, ifMatchOf(req)));
    },
    deleteProject: async (req, res) => {
      res.json(await deleteProject(ctx, req.user, req.params.projectid, ifMatchOf(req)));
    },
  };
}

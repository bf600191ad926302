import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { createProject, getProject, listProjects, updateProject } from './projects-service.ts';

export function projectsHandlers(ctx: Context): OperationHandlers {
  return {
    listProjects: async (req, res) => {
      res.json(await listProjects(ctx, req.user!));
    },
    createProject: async (req, res) => {
      res.json(await createProject(ctx, req.user!, req.body));
    },
    getProject: async (req, res) => {
      res.json(await getProject(ctx, req.user!, req.params.projectid));
    },
    updateProject: async (req, res) => {
      res.json(await updateProject(ctx, req.user!, req.params.projectid, req.body));
    },
  };
}

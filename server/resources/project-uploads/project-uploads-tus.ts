/**
 * Project members' resumable uploads: tus 1.0.0
 * (https://tus.io/protocols/resumable-upload) under
 * /api/v1/projects/{projectid}/tus, through the protocol the upload portal
 * speaks too (tus/tus-routes.ts). Mounted in the API's router after its
 * authentication (a token with projects:write, or the session cookie, whose
 * unsafe requests must come from the server's own origin: http/auth.ts) and
 * before its body parser and validator: PATCH bodies
 * (application/offset+octet-stream) stream to disk unparsed, and these
 * routes check their own headers, path and query the way the validator
 * would answer.
 *
 * The rules are project-uploads-service.ts's: who may upload (the access
 * check of requestUploadUrl), the limits, the file box (made by
 * requestUploadUrl's own service), the room only bytes received take.
 */
import type { Request, Response } from 'express';
import type { Context } from '../../context.ts';
import { apiRoot } from '../../lib/api-root.ts';
import type { Caller } from '../../auth/access.ts';
import { apiMetadataUrl, bearerChallenge } from '../../http/auth.ts';
import { HttpProblem, notFound } from '../../lib/problems.ts';
import { announcedBytes, TUS_VERSION, tusHandler, type TusResource } from '../tus/tus-routes.ts';
import { abandon, claimRoom, createUpload, finishUpload, projectUploadDir, requireUpload, settleUpload, uploadableProject } from './project-uploads-service.ts';

/** What a request is admitted for: the project, and the member who calls (none on OPTIONS, which takes no credential). */
interface ProjectScope {
  projectId: string;
  caller: Caller | undefined;
}

export function projectUploadTusHandler(ctx: Context) {
  /** The caller, who authentication found (it refused the request with 401 otherwise; OPTIONS is the one method it lets through without). */
  const callerOf = (scope: ProjectScope): Caller => {
    if (!scope.caller) {
      throw new HttpProblem('unauthorized', 'Send an Authorization header of the form "Bearer <token>", or sign in.', {
        headers: { 'WWW-Authenticate': bearerChallenge(false, apiMetadataUrl(ctx.config.publicUrl)) },
      });
    }
    return scope.caller;
  };
  const resource: TusResource<ProjectScope> = {
    what: 'a project member\'s upload',
    scopeParam: 'projectid',
    uploadParam: 'projectuploadid',
    idPrefix: 'tup',
    directory: projectUploadDir(ctx.config.dataDir),
    uploadUrlBase: (scope) => `${apiRoot(ctx.config)}/projects/${encodeURIComponent(scope.projectId)}/tus`,
    async admit(req: Request) {
      const projectId = String(req.params.projectid);
      const caller = req.user;
      // OPTIONS takes no credential (the spec says why): its answer is the server's, the same for every project.
      if (req.method !== 'OPTIONS') await uploadableProject(ctx, callerOf({ projectId, caller }), projectId);
      return { projectId, caller };
    },
    async beforeUpload(req: Request, res: Response, scope, uploadId) {
      if (req.method === 'OPTIONS') return false;
      const upload = await requireUpload(ctx, callerOf(scope), scope.projectId, uploadId);
      res.setHeader('Upload-File-Id', upload.boxId);
      if (upload.timeCompleted !== null) {
        if (req.method !== 'HEAD') throw completeRefusal(scope.projectId, uploadId, upload.boxId);
        // tus 1.0.0, HEAD: "The Server MUST always include the Upload-Offset header in the response for a HEAD request". tus's own record
        // of a complete upload is gone with its bytes (into the blob store): the answer is made here, with the whole length, so that a
        // client resuming after a reload learns there is nothing left to send, and which file it made.
        res.status(200).set({ 'Upload-Offset': String(upload.size), 'Upload-Length': String(upload.size), 'Cache-Control': 'no-store', 'Tus-Resumable': TUS_VERSION }).end();
        return true;
      }
      if (req.method === 'DELETE') {
        // tus 1.0.0, termination: "the Server SHOULD free resources"; the file box waiting for these bytes goes with them.
        await abandon(ctx, upload, 'The upload was cancelled.');
      }
      if (req.method === 'PATCH') {
        // Only bytes received take room: this PATCH claims the room of the bytes it announces, and is refused (413) before a byte when
        // they would take the owner over their quota.
        const offset = Number(req.get('upload-offset'));
        await claimRoom(ctx, upload, offset, announcedBytes(req, upload.size - offset));
      }
      return false;
    },
    async create(scope, upload) {
      const file = await createUpload(ctx, callerOf(scope), scope.projectId, upload);
      return { 'Upload-File-Id': file.id };
    },
    async finish(_scope, uploadId, path) {
      const file = await finishUpload(ctx, uploadId, path);
      return { 'Upload-File-Id': file.id };
    },
    settle: (uploadId, stored) => settleUpload(ctx, uploadId, stored),
    // A project deleted, or the caller's role taken away, cuts a request under way.
    stillOpen: (scope) => uploadableProject(ctx, callerOf(scope), scope.projectId).then(() => true),
  };
  return tusHandler(ctx, resource);
}

function completeRefusal(projectId: string, uploadId: string, fileId: string) {
  return notFound(`The upload ${uploadId} of project ${projectId} is complete: its file is ${fileId}. To replace it, upload the file again; to remove it, delete the file.`);
}

import type { OperationHandlers, OperationRequest } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import * as uploads from './uploads-service.ts';
import type { UploadKind } from './upload-repository.ts';

function putRequest(req: OperationRequest<'uploadFile' | 'uploadArtwork'>, kind: UploadKind): uploads.PutRequest {
  const length = req.get('content-length');
  return {
    kind,
    uploadId: req.params.uploadid,
    // The validator has checked both query parameters against the spec.
    expires: Number(req.query.expires),
    signature: String(req.query.signature),
    contentType: req.get('content-type'),
    contentLength: length === undefined ? undefined : Number(length),
    metadata: {
      destination: req.get('x-storage-meta-destination'),
      projectid: req.get('x-storage-meta-projectid'),
      boxpath: req.get('x-storage-meta-boxpath'),
      writeback: req.get('x-storage-meta-writeback'),
    },
    body: req,
  };
}

export function uploadsHandlers(ctx: Context): OperationHandlers {
  return {
    requestUploadUrl: async (req, res) => {
      res.json(await uploads.requestUploadUrl(ctx, req.user, req.params.projectid, req.body));
    },
    getStorageUsage: async (req, res) => {
      res.json(await uploads.storageUsage(ctx, req.user));
    },
    requestArtworkUploadUrl: async (req, res) => {
      res.json(await uploads.requestArtworkUploadUrl(ctx, req.user, req.params.projectid, req.body));
    },
    uploadFile: async (req, res) => {
      res.json(await uploads.putFile(ctx, putRequest(req, 'file')));
    },
    uploadArtwork: async (req, res) => {
      res.json(await uploads.putArtwork(ctx, putRequest(req, 'artwork')));
    },
  };
}

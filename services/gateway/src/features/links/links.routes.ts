import type { Request } from 'express';
import { AppError, errors } from '@workspace/platform';
import type { LinkSigner } from './link-signer.js';
import type { ObjectStore } from '../../transfer/object-store.js';
import { CreateLinkBody, LinkParams, LinkResult } from './links.schemas.js';
import { sendFile } from '../../transfer/send-file.js';

import { defineRoute, type RouteDef } from '../../api/route.js';
import type { FilesClient } from '../../clients.js';

export const LINKS_PATH = '/v1/agent/files/links';

/** What temporary links need: who signs them, and the gateway's public address. */
export interface LinkOptions {
  signer: LinkSigner;
  /** PUBLIC_URL (`https://api.example.com`); unset: the scheme and host the request came to. */
  publicUrl?: string | undefined;
}

/** What the files service answers for bytes that are gone: to a link holder, the link is. */
const GONE: ReadonlySet<string> = new Set(['FILE_NOT_FOUND', 'REVISION_NOT_FOUND', 'IS_A_DIRECTORY', 'INVALID_PATH']);

function baseUrl(req: Request, publicUrl: string | undefined): string {
  return (publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`).replace(/\/+$/, '');
}

/**
 * Temporary links (docs/api/files.md#temporary-links): signed, never stored, pinned to the revision
 * (and sha256) the file had when the link was made, so an overwrite does not change what the link
 * serves; once retention reclaims those bytes (FILE_REVISION_DAYS, a permanent delete) the link is
 * 404.
 */
export function linksRoutes(deps: { files: FilesClient; store: ObjectStore; links: LinkOptions }): RouteDef[] {
  const { files, store, links } = deps;
  return [
    defineRoute({
      method: 'post',
      path: LINKS_PATH,
      operationId: 'createFileLink',
      summary: 'Make a temporary download link to a file',
      description:
        'The link downloads the bytes the file has now — an overwrite or delete afterwards does not change them — with no token, until `expiresAt`, ' +
        'answering as `files/download` does (ETag, Range, If-None-Match). Links are HMAC-signed (LINK_SIGNING_KEYS) and never stored: they cannot be ' +
        'revoked one by one, only all at once by retiring their key. Bytes reclaimed by retention make the link 404.',
      tag: 'Files',
      body: CreateLinkBody,
      responses: { 201: { description: 'The link', schema: LinkResult } },
      example: { body: { path: '/files/notes.md', expiresIn: 3600 }, response: { url: 'https://api.example.com/v1/agent/files/links/eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0.e30.c2ln', expiresAt: '2026-01-01T12:00:00.000Z' } },
      errors: ['INVALID_ARGUMENT', 'INVALID_PATH', 'UNAUTHENTICATED', 'UNAVAILABLE', 'FILE_NOT_FOUND', 'IS_A_DIRECTORY'],
      handler: async ({ body, call, req }, res) => {
        // The revision of exactly the bytes stated: a later write does not move the link.
        const { path, sha256, revision } = await files.statFile({ path: body.path, revision: '' }, call);
        const expiresAt = Math.floor(Date.now() / 1000) + body.expiresIn;
        const token = await links.signer.sign({ userId: call.userId, path, revision, sha256, expiresAt });
        res.status(201).json({ url: `${baseUrl(req, links.publicUrl)}${LINKS_PATH}/${token}`, expiresAt: new Date(expiresAt * 1000).toISOString() });
      },
    }),
    defineRoute({
      method: 'get',
      path: `${LINKS_PATH}/{token}`,
      operationId: 'downloadFileLink',
      summary: 'Download through a temporary link (no token)',
      description: 'The bytes the link was made for, as `files/download` answers them. A tampered or expired link, or one whose bytes are gone → 404 LINK_NOT_FOUND.',
      tag: 'Files',
      auth: false,
      // Unauthenticated: each link draws from its own budget.
      rateLimitKey: (req) => `link:${String(req.params.token)}`,
      params: LinkParams,
      example: { params: { token: 'eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0.e30.c2ln' } },
      responses: {
        200: { description: 'The file', contentType: 'application/octet-stream', headers: { ETag: '"<sha256 of the bytes>"', 'Content-Disposition': 'attachment; filename="…"; filename*=UTF-8\'\'…' } },
        206: { description: 'One range of the file', contentType: 'application/octet-stream', headers: { 'Content-Range': 'bytes start-end/size' } },
        304: { description: 'Not modified (If-None-Match matched)' },
      },
      errors: ['LINK_NOT_FOUND', 'UNAVAILABLE'],
      handler: async ({ params, call, req }, res) => {
        const claims = await links.signer.verify(params.token);
        if (!claims) throw errors.notFound('link', 'the link is not valid or has expired');
        const owner = { ...call, userId: claims.userId };
        try {
          const opened = await files.openDownload({ path: claims.path, revision: claims.revision }, owner);
          if (opened.entry?.sha256 !== claims.sha256) throw errors.notFound('link', 'the bytes of this link are gone');
          await sendFile(store, opened, { req, res, signal: call.signal });
        } catch (err) {
          if (err instanceof AppError && GONE.has(err.code)) throw errors.notFound('link', 'the bytes of this link are gone');
          throw err;
        }
      },
    }),
  ];
}

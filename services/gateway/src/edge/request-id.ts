import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { setRequestId } from './request-context.js';

const VALID = /^[A-Za-z0-9._-]{1,128}$/;

/** Keeps the caller's X-Request-Id when it is well-formed, else makes one; echoes it back. */
export const requestId: RequestHandler = (req, res, next) => {
  const given = req.get('x-request-id');
  const id = given && VALID.test(given) ? given : randomUUID();
  setRequestId(res, id);
  res.setHeader('X-Request-Id', id);
  next();
};

#!/usr/bin/env node
// Container health check without extra binaries: `healthcheck grpc <host:port>` asks
// grpc.health.v1, `healthcheck http <url>` expects a 2xx; without arguments, the same words
// from the HEALTHCHECK environment variable (set by the image). Exit 0 when healthy, 1 otherwise.
import { createHealthChecker } from './grpc/health.js';

const args = process.argv.length > 2 ? process.argv.slice(2) : (process.env.HEALTHCHECK ?? '').trim().split(/\s+/);
const [kind, target] = args;
const TIMEOUT_MS = 2_000;

async function healthy(): Promise<boolean> {
  if (kind === 'grpc' && target) {
    const checker = createHealthChecker(target);
    try {
      return await checker.check(TIMEOUT_MS);
    } finally {
      checker.close();
    }
  }
  if (kind === 'http' && target) {
    const res = await fetch(target, { signal: AbortSignal.timeout(TIMEOUT_MS) }).catch(() => undefined);
    return res?.ok === true;
  }
  console.error('usage: healthcheck grpc <host:port> | healthcheck http <url>');
  return false;
}

process.exit((await healthy()) ? 0 : 1);

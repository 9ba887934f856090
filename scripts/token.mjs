// npm run token -- <sub> [--ttl <seconds>]: prints a development token for the configured
// HS256 secret (AUTH_JWT_SECRET, else the development secret under DATA_DIR).
import { SignJWT } from 'jose';
import { devSecret } from './lib.mjs';

const args = process.argv.slice(2);
const ttlAt = args.indexOf('--ttl');
const ttl = ttlAt >= 0 ? Number(args.splice(ttlAt, 2)[1]) : 24 * 3600;
const sub = args[0];
if (!sub || !Number.isFinite(ttl) || ttl <= 0) {
  console.error('usage: npm run token -- <sub> [--ttl <seconds>]');
  process.exit(2);
}
let jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(sub).setIssuedAt().setExpirationTime(`${ttl}s`);
if (process.env.AUTH_ISSUER) jwt = jwt.setIssuer(process.env.AUTH_ISSUER);
if (process.env.AUTH_AUDIENCE) jwt = jwt.setAudience(process.env.AUTH_AUDIENCE);
console.log(await jwt.sign(new TextEncoder().encode(devSecret())));

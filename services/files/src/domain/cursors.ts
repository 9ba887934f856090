import { createHmac, timingSafeEqual } from 'node:crypto';
import { errors } from '@workspace/platform';

/**
 * Opaque, tamper-evident cursors (docs/api/files.md#paging, docs/api/files.md#changes): the
 * position and what it was issued for, with an HMAC over both and the user, so a cursor that was
 * altered, made up, or issued for another path, listing or user is refused. The key is shared by
 * every replica.
 */
export class Cursors {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  sign(userId: string, scope: string, position: string): string {
    const payload = Buffer.from(JSON.stringify([scope, position]), 'utf8').toString('base64url');
    return `${payload}.${this.#mac(userId, payload).toString('base64url')}`;
  }

  /** The position of a cursor issued to `userId` for `scope`; INVALID_ARGUMENT (field `field`) otherwise. */
  verify(userId: string, scope: string, token: string, field = 'cursor'): string {
    const invalid = () => errors.invalidArgument('the cursor is not valid for this request', field);
    const [payload = '', mac = '', extra] = token.split('.');
    if (extra !== undefined || payload === '') throw invalid();
    // Compared as text: base64 decoding is lenient (trailing characters may be ignored).
    const expected = Buffer.from(this.#mac(userId, payload).toString('base64url'));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    const [issuedFor, position] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as [unknown, unknown];
    if (issuedFor !== scope || typeof position !== 'string') throw invalid();
    return position;
  }

  #mac(userId: string, payload: string): Buffer {
    return createHmac('sha256', this.#key).update(userId).update('\0').update(payload).digest().subarray(0, 18);
  }
}

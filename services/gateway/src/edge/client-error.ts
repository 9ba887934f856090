import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorCode, Logger } from '@workspace/platform';

/** How long a refused connection may take to flush the answer before it is cut. */
const FLUSH_MS = 5_000;

/** Node's parser errors, in our words (its own text never reaches a client). */
function answerOf(code: string | undefined): { status: number; code: ErrorCode; reason: string; message: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'HEADERS_TOO_LARGE', reason: 'Request Header Fields Too Large', message: 'request headers are larger than 16 KiB' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'REQUEST_TIMEOUT', reason: 'Request Timeout', message: 'the request did not arrive in time' };
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return { status: 400, code: 'INVALID_ARGUMENT', reason: 'Bad Request', message: 'malformed request: Content-Length with Transfer-Encoding, or a bad Transfer-Encoding' };
    case 'HPE_INVALID_EOF_STATE':
      return { status: 400, code: 'INVALID_ARGUMENT', reason: 'Bad Request', message: 'the request body ended early' };
    default:
      return { status: 400, code: 'INVALID_ARGUMENT', reason: 'Bad Request', message: 'malformed HTTP request' };
  }
}

/**
 * The http server's `clientError` listener: what Node would answer itself (400, 408, 431 with
 * an empty body), answered with the contract's envelope, then the connection closed. Sockets
 * already reset, or whose response has begun, are only destroyed.
 */
export function answerClientError(logger: Logger) {
  return (err: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void => {
    // A response in flight on this connection may have started: writing more would corrupt it.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, code, reason, message } = answerOf(err.code);
    const requestId = randomUUID();
    logger.info({ requestId, status, code: err.code }, 'malformed request refused');
    const body = JSON.stringify({ error: { code, message, requestId } });
    const head = [
      `HTTP/1.1 ${status} ${reason}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      'X-Content-Type-Options: nosniff',
      'Connection: close',
    ].join('\r\n');
    const cutOff = setTimeout(() => socket.destroy(), FLUSH_MS).unref();
    // A HEAD is answered without the body (its headers still say how long it would be): a client
    // reads no body after a HEAD, and the envelope's bytes would reach it as garbage.
    socket.end(isHead(err.rawPacket) ? `${head}\r\n\r\n` : `${head}\r\n\r\n${body}`, () => {
      clearTimeout(cutOff);
      socket.destroy();
    });
  };
}

/**
 * Whether the refused request is a HEAD, as far as the bytes Node was parsing tell: the request
 * line comes first in them when the request came in one piece (a request whose headers arrived in
 * several pieces is answered as a GET would be).
 */
function isHead(raw: Buffer | undefined): boolean {
  return raw !== undefined && raw.subarray(0, 5).toString('latin1') === 'HEAD ';
}

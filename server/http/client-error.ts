/**
 * Requests Node's HTTP parser refuses before any route sees them, answered as
 * problems. Shared by the server and the partner mock (mock/), so that both
 * refuse them alike.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../lib/logger.ts';
import { HttpProblem } from '../lib/problems.ts';
import { requestIds } from './request-context.ts';
import { apiContentSecurityPolicy } from './security-headers.ts';

/** Request headers larger than this are answered 431 (Node's default, stated). */
export const maxHeaderSize = 16 * 1024;

/**
 * Requests Node's HTTP parser refuses before any route sees them: headers
 * over maxHeaderSize, malformed HTTP (including a NUL in a header), a header
 * section that never ends. Node would answer a bare 431/400/408; this
 * answers a problem, with the API's security and CORS headers, and closes.
 */
export function clientErrorAnswer(logger: Pick<Logger, 'debug'>) {
  const nextId = requestIds();
  return (error: Error & { code?: string }, socket: Duplex & { _httpMessage?: ServerResponse | null }) => {
    // As Node's own handler: answer only when the socket can take it and no response has begun on it.
    if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const problem =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? new HttpProblem('headers-too-large', `The request's headers are over ${maxHeaderSize / 1024} KiB. Send fewer or shorter headers (a long cookie or token?).`)
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'HPE_HEADER_TIMEOUT'
          ? new HttpProblem('request-timeout', 'The request headers did not arrive in time.')
          : new HttpProblem('validation-error', `The request is not valid HTTP/1.1 (${error.code ?? 'parse error'}); a header may hold a character it may not, such as NUL.`);
    const id = nextId();
    logger.debug('request refused by the HTTP parser', { requestId: id, code: error.code, status: problem.status });
    const body = JSON.stringify(problem.body(id));
    socket.end(
      [
        `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}`,
        'Content-Type: application/problem+json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Request-Id: ${id}`,
        `Content-Security-Policy: ${apiContentSecurityPolicy}`,
        'X-Content-Type-Options: nosniff',
        'Access-Control-Allow-Origin: *',
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  };
}

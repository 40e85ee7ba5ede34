import type { IncomingMessage } from 'node:http';
import { AutoteamError } from '../core/errors.js';

/**
 * The largest request body taken (a requirement, an answer, an MCP message): room for a requirement
 * of MAX_REQUIREMENT_BYTES as a JSON string, whose quotes and backslashes are escaped.
 */
export const MAX_BODY_BYTES = 256 * 1024;

/** A request refused with an HTTP status (413, 400, 404) and the one line to read. */
export class RequestError extends AutoteamError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message, 'WEB_REQUEST');
  }
}

/**
 * The request's JSON body, at most MAX_BODY_BYTES ({} when empty): a larger declared length is
 * refused before a byte is read, and a body that grows past it stops being read.
 */
export function readBody(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) return reject(new RequestError(413, `the body is larger than ${MAX_BODY_BYTES} bytes`));
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        request.destroy();
        reject(new RequestError(413, `the body is larger than ${MAX_BODY_BYTES} bytes`));
      } else chunks.push(chunk);
    });
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (!text) return resolve({});
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new RequestError(400, 'the body is not JSON'));
      }
    });
    request.on('error', reject);
  });
}

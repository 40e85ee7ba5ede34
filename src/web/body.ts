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
    /** JSON-RPC's code for it, where the MCP endpoint answers: -32700 for a body that does not parse. */
    readonly rpcCode = -32000,
  ) {
    super(message, 'WEB_REQUEST');
  }
}

/** How much of a body past the limit is read and dropped, so the 413 reaches the client, before the connection is cut. */
const DRAIN_BYTES = 16 * 1024 * 1024;

/**
 * The request's JSON body, at most MAX_BODY_BYTES ({} when empty): a larger declared length is
 * refused before a byte is read. A body that grows past it (chunked, with no length declared) is
 * refused as it passes the limit; the rest is read and dropped, so the client, still sending, gets
 * the 413 rather than a reset connection — up to DRAIN_BYTES, then the connection is cut.
 */
export function readBody(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new RequestError(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) return reject(tooLarge());
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else if (size - chunk.length <= MAX_BODY_BYTES) {
        chunks.length = 0;
        reject(tooLarge());
      } else if (size > MAX_BODY_BYTES + DRAIN_BYTES) request.destroy();
    });
    request.on('end', () => {
      if (size > MAX_BODY_BYTES) return;
      const text = Buffer.concat(chunks).toString('utf8');
      if (!text) return resolve({});
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new RequestError(400, 'the body is not JSON', -32700));
      }
    });
    request.on('error', reject);
  });
}

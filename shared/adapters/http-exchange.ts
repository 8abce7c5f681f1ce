/**
 * The HTTP client of a binding, on node:http and node:https rather than fetch. A binding must decide three things
 * fetch decides for it: where a redirect goes (fetch follows, carrying the binding's headers to wherever the answer
 * points), how much of an answer it reads (`text()` reads all of it, however large), and which addresses its
 * sockets connect to (fetch's dispatcher cannot be given a lookup without the undici package). Here nothing is
 * followed, a body is read up to a bound, and every socket of a client resolves its host through the client's lookup
 * (shared/adapters/address-guard.ts).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

export interface HttpSendInit {
  readonly method: 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The whole exchange: aborting it after the answer's headers stops the reading of its body too. */
  readonly signal: AbortSignal;
}

export interface HttpClient {
  /** One request, answered once its status and headers are in; the body is the caller's to read or drop. */
  send(url: URL, init: HttpSendInit): Promise<IncomingMessage>;
  /** Closes the pooled connections. */
  close(): void;
}

export interface HttpClientOptions {
  /** How every socket of this client resolves its host; node:dns `lookup` by default. */
  readonly lookup?: LookupFunction;
}

/**
 * A client with its own pools of kept-alive connections: a connection opened under one binding's address policy is
 * never reused by a binding with another.
 */
export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const agentOptions = { keepAlive: true, ...(options.lookup === undefined ? {} : { lookup: options.lookup }) };
  let plain: HttpAgent | undefined;
  let secure: HttpsAgent | undefined;
  const agentFor = (tls: boolean): HttpAgent => {
    if (tls) {
      secure ??= new HttpsAgent(agentOptions);
      return secure;
    }
    plain ??= new HttpAgent(agentOptions);
    return plain;
  };
  return {
    send(url, init) {
      const tls = url.protocol === 'https:';
      const agent = agentFor(tls);
      return new Promise((resolve, reject) => {
        const request = (tls ? httpsRequest : httpRequest)(url, {
          method: init.method,
          headers: { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) },
          signal: init.signal,
          agent,
        });
        request.once('response', resolve);
        // Kept after the answer: an error once it is in (the body cut short) must not go unhandled.
        request.on('error', reject);
        request.end(init.body);
      });
    },
    close() {
      plain?.destroy();
      secure?.destroy();
    },
  };
}

export interface BoundedBody {
  /** At most the bound's bytes. */
  readonly bytes: Buffer;
  /** False: the body went on past the bound, and the rest was not read. */
  readonly complete: boolean;
}

/**
 * Reads a body up to `maxBytes`. Past them it stops and destroys the response, which closes its connection: the
 * sender sees its stream cancelled and nothing more is buffered.
 */
export async function readBounded(response: IncomingMessage, maxBytes: number): Promise<BoundedBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    const bytes = chunk as Buffer;
    if (size + bytes.length > maxBytes) {
      chunks.push(bytes.subarray(0, maxBytes - size));
      response.destroy();
      return { bytes: Buffer.concat(chunks), complete: false };
    }
    chunks.push(bytes);
    size += bytes.length;
  }
  return { bytes: Buffer.concat(chunks), complete: true };
}

/** The body length the answer declares (`content-length`), if it declares a valid one. */
export function declaredLength(response: IncomingMessage): number | undefined {
  const header = response.headers['content-length'];
  if (header === undefined || !/^\d+$/.test(header)) return undefined;
  return Number(header);
}

/** UTF-8 as fetch's `text()` decodes it (a leading byte order mark dropped, bad sequences replaced). */
export const decodeText = (bytes: Buffer): string => new TextDecoder().decode(bytes);

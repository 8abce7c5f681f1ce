/**
 * A real HTTP server on 127.0.0.1 (port 0) for binding tests: each test sets how it answers; every request is
 * recorded with its headers and parsed body.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export type Responder = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface TestHttpServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  respondWith(responder: Responder): void;
  close(): Promise<void>;
}

export const json =
  (status: number, body: unknown): Responder =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

export async function startHttpServer(): Promise<TestHttpServer> {
  const requests: RecordedRequest[] = [];
  let responder: Responder = json(200, {});
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      Promise.resolve(responder(recorded, res)).catch((error: unknown) => {
        res.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/capability`,
    requests,
    respondWith(next) {
      responder = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A URL on 127.0.0.1 where nothing listens (a port that was just released). */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/capability`;
}

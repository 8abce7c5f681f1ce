/** A local receiver of approval notifications for tests: a node http server that records every POST as it came. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly raw: Buffer;
  readonly body: { type: string; timestamp: string; text: string; data: Record<string, unknown> };
}

export interface NotifyReceiver {
  readonly url: string;
  readonly received: Received[];
  /** Answers this many of the next requests with `status` (500 by default) before taking them again. */
  fail(count: number, status?: number): void;
  /** Resolves with the first recorded notification that `match` accepts; fails after `timeoutMs`. */
  waitFor(match: (r: Received) => boolean, timeoutMs?: number): Promise<Received>;
  close(): Promise<void>;
}

export async function startNotifyReceiver(): Promise<NotifyReceiver> {
  const received: Received[] = [];
  let failing = 0;
  let failStatus = 500;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (failing > 0) {
        failing -= 1;
        response.writeHead(failStatus).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      received.push({ headers: request.headers, raw, body: JSON.parse(raw.toString('utf8')) as Received['body'] });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/approvals`,
    received,
    fail(count, status = 500) {
      failing = count;
      failStatus = status;
    },
    async waitFor(match, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = received.find(match);
        if (found) return found;
        if (Date.now() > until)
          throw new Error(`no matching notification; received: ${received.map((r) => r.body.type).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

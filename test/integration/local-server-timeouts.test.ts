/**
 * The embedded server's own timeouts (infra/local/http-server.ts), set through the stack's options: late headers
 * and a late request are answered 408 and closed, and a socket that goes quiet is closed. Short timeouts keep the
 * test quick; what is asserted is the answer and the closed socket, never a duration.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useTestStack } from '../support/local-stack.ts';

const stack = useTestStack({ serverTimeouts: { requestMs: 3000, headersMs: 500, keepAliveMs: 200, idleMs: 1500 } });

/** Opens a raw connection to the stack, lets `act` write on it, and resolves with all it read once it closed. */
function exchange(act: (socket: Socket) => void): Promise<string> {
  const { hostname, port } = new URL(stack.url);
  return new Promise((resolve, reject) => {
    let read = '';
    const socket = connect(Number(port), hostname, () => act(socket));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      read += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(read));
  });
}

const POST_HEAD = (length: number) =>
  `POST /plans/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.token}\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe('the embedded server: timeouts', () => {
  it('answers 408 and closes a connection that never sends a byte', async () => {
    const read = await exchange(() => undefined);
    expect(read).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('answers 408 and closes a request whose body comes a byte at a time', async () => {
    let drip: NodeJS.Timeout | undefined;
    const read = await exchange((socket) => {
      socket.write(POST_HEAD(10_000));
      drip = setInterval(() => {
        if (!socket.destroyed) socket.write(' ');
      }, 100);
    });
    clearInterval(drip);
    expect(read).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes, unanswered, a socket that goes quiet half-way through its body', async () => {
    const read = await exchange((socket) => {
      socket.write(`${POST_HEAD(100)}{"plan":`);
    });
    expect(read).toBe('');
  });
});

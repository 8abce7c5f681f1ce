/**
 * One client connection per MCP server, shared by every binding (and every concurrent call) that names the server:
 * a stdio server is one child process, not one per call, and a Streamable HTTP server one session.
 *
 * A connection is opened on first use. When it breaks (the child exits, the session is closed, a transport error)
 * it is dropped, and the next call opens a new one. A call is repeated on a fresh connection only when the server
 * cannot have acted on it: the reused connection turned out to be closed before the request went out, or the
 * server answered HTTP 404 for a session it no longer knows (the spec's signal to start a new session). Anything
 * else is the step's failure to retry or not (errors.ts), so a side effect is never sent twice from here.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { CAPABILITY_ERROR_CODES, capabilityError } from '../../capabilities/capability-errors.ts';
import type { McpHttpBindingConfig, McpStdioBindingConfig } from '../../capabilities/mcp-binding-config.ts';
import { refsIn, type SecretValue } from '../../capabilities/secret-ref.ts';
import type { CapabilityError } from '../../errors.ts';
import { asCapabilityFailure, createSecretResolver, type SecretResolver } from '../secret-values.ts';
import { mcpCallError } from './errors.ts';

/** Where a server is: a binding's configuration without the tool. */
export type McpServerAddress =
  | Pick<McpStdioBindingConfig, 'transport' | 'command' | 'args' | 'env'>
  | Pick<McpHttpBindingConfig, 'transport' | 'url' | 'headers'>;

/** The MCP SDK's own request timeout, kept as ours so a binding without `timeoutMs` behaves as the SDK does. */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;
const CLIENT_INFO = { name: 'cairn', version: '0.1.0' };
/** How much of a stdio server's stderr is kept, to explain why it went away. */
const STDERR_TAIL_CHARS = 2000;
/** How long closing waits for an HTTP session's DELETE before giving up on being polite. */
const TERMINATE_WAIT_MS = 2000;

/** The identity of a server: two bindings with the same address share a connection. */
export function serverKey(server: McpServerAddress): string {
  return server.transport === 'stdio'
    ? JSON.stringify(['stdio', server.command, server.args ?? [], sortedEntries(server.env)])
    : JSON.stringify(['http', server.url, sortedEntries(server.headers)]);
}

const sortedEntries = (record: Readonly<Record<string, SecretValue>> | undefined): [string, SecretValue][] =>
  Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** How messages name a server (never its environment or headers, which may hold secrets). */
export function describeServer(server: McpServerAddress): string {
  return server.transport === 'stdio'
    ? `MCP server "${[server.command, ...(server.args ?? [])].join(' ')}"`
    : `MCP server ${server.url}`;
}

export interface McpConnections {
  /**
   * Runs `use` with a connected client for the server. Failures come back classified (errors.ts) as
   * CapabilityErrors, with the tail of a stdio server's stderr when the connection is what failed.
   */
  withClient<T>(
    server: McpServerAddress,
    use: (client: Client) => Promise<T>,
    options?: {
      readonly timeoutMs?: number;
      readonly source?: string;
      /** The call's signal: once aborted, a failure is the call being stopped, not the connection breaking. */
      readonly signal?: AbortSignal;
    },
  ): Promise<T>;
  /** Closes every connection (stdio children are stopped); later calls fail. Idempotent. */
  close(): Promise<void>;
}

interface Live {
  readonly connecting: Promise<Client>;
  client?: Client;
}

class ServerConnection {
  #live: Live | undefined;
  #closed = false;
  #stderr = '';

  constructor(
    private readonly server: McpServerAddress,
    private readonly secrets: () => SecretResolver,
  ) {}

  get stderrTail(): string {
    return this.#stderr.trim();
  }

  /** A connected client, and whether it was already connected before this call asked (a reused one). */
  async acquire(timeoutMs: number): Promise<{ client: Client; reused: boolean }> {
    if (this.#closed) throw new McpError(ErrorCode.ConnectionClosed, 'the runtime is stopping; MCP calls are closed');
    const current = this.#live?.client;
    if (current !== undefined && childGone(current)) this.discard(current);
    const live = this.#live;
    if (live?.client !== undefined) return { client: live.client, reused: true };
    if (live !== undefined) return { client: await live.connecting, reused: false };
    const fresh: Live = { connecting: this.#connect(timeoutMs, () => fresh) };
    this.#live = fresh;
    return { client: await fresh.connecting, reused: false };
  }

  /** Forgets a broken client so the next call reconnects, and lets the old one go. */
  discard(client: Client): void {
    if (this.#live?.client === client) this.#live = undefined;
    client.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const live = this.#live;
    this.#live = undefined;
    const client = await live?.connecting.catch(() => undefined);
    if (client === undefined) return;
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined)
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, TERMINATE_WAIT_MS).unref()),
      ]);
    await client.close().catch(() => undefined);
  }

  async #connect(timeoutMs: number, self: () => Live): Promise<Client> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    // The failing request reports the error; the client's own error channel would only repeat it.
    client.onerror = () => undefined;
    client.onclose = () => {
      if (this.#live === self()) this.#live = undefined;
    };
    try {
      await client.connect(await this.#transport(), { timeout: timeoutMs });
    } catch (error) {
      if (this.#live === self()) this.#live = undefined;
      await client.close().catch(() => undefined);
      throw error;
    }
    // Closed while connecting (stack shutdown): do not leave a child process behind.
    if (this.#closed) {
      await client.close().catch(() => undefined);
      throw new McpError(ErrorCode.ConnectionClosed, 'the runtime is stopping; MCP calls are closed');
    }
    self().client = client;
    return client;
  }

  async #transport(): Promise<StdioClientTransport | StreamableHTTPClientTransport> {
    const server = this.server;
    if (server.transport === 'http') {
      const headers = server.headers ?? {};
      if (refsIn(headers).length === 0)
        return new StreamableHTTPClientTransport(new URL(server.url), {
          ...(server.headers === undefined
            ? {}
            : { requestInit: { headers: { ...(headers as Record<string, string>) } } }),
        });
      // Values named by reference are read for every request (through the resolver's cache: a rotated secret is
      // picked up by a connection that stays open); the SDK's own headers go over them, as over requestInit's.
      const secrets = this.secrets;
      return new StreamableHTTPClientTransport(new URL(server.url), {
        fetch: async (url, init) => {
          const merged = new Headers(await secrets().resolveAll(headers).catch(asCapabilityFailure));
          for (const [name, value] of new Headers(init?.headers)) merged.set(name, value);
          return fetch(url, { ...init, headers: merged });
        },
      });
    }
    const env =
      server.env === undefined ? undefined : await this.secrets().resolveAll(server.env).catch(asCapabilityFailure);
    const transport = new StdioClientTransport({
      command: server.command,
      args: [...(server.args ?? [])],
      ...(env === undefined ? {} : { env }),
      stderr: 'pipe',
    });
    this.#stderr = '';
    transport.stderr?.on('data', (chunk: Buffer | string) => {
      this.#stderr = (this.#stderr + String(chunk)).slice(-STDERR_TAIL_CHARS);
    });
    return transport;
  }
}

/**
 * A stdio server whose process is gone, before its transport has reported the close (the exit and the end of its
 * pipes arrive apart): sending would only wait for that close, so the caller reconnects instead.
 */
function childGone(client: Client): boolean {
  const transport = client.transport;
  if (!(transport instanceof StdioClientTransport) || transport.pid === null) return false;
  try {
    process.kill(transport.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The server never acted on the request: the reused connection was gone, or it forgot the session. */
function neverReachedTheServer(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code === 404;
  return error instanceof Error && !(error instanceof McpError) && error.message === 'Not connected';
}

/** Whether the connection itself failed (drop it) rather than the server answering with an error (keep it). */
function brokeTheConnection(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  return !(error instanceof Error && error.name === 'ZodError');
}

export interface McpConnectionsOptions {
  /** Reads the headers and environment values a binding names by reference (default: env, files, Secrets Manager). */
  readonly secrets?: () => SecretResolver;
}

export function createMcpConnections(options: McpConnectionsOptions = {}): McpConnections {
  let resolver: SecretResolver | undefined;
  const secrets = options.secrets ?? (() => (resolver ??= createSecretResolver()));
  const byServer = new Map<string, ServerConnection>();
  let closed = false;

  const classify = (error: unknown, connection: ServerConnection, source: string): CapabilityError => {
    const failure = mcpCallError(error, source);
    const tail = connection.stderrTail;
    if (!brokeTheConnection(error) || tail === '') return failure;
    failure.message = `${failure.message} (the server's stderr ends with: ${tail.slice(-500)})`;
    return failure;
  };

  return {
    async withClient(server, use, options = {}) {
      const timeoutMs = options.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
      const source = options.source ?? describeServer(server);
      const key = serverKey(server);
      let connection = byServer.get(key);
      if (connection === undefined) {
        connection = new ServerConnection(server, secrets);
        if (!closed) byServer.set(key, connection);
        else await connection.close();
      }
      for (let attempt = 1; ; attempt += 1) {
        let acquired: { client: Client; reused: boolean };
        try {
          acquired = await connection.acquire(timeoutMs);
        } catch (error) {
          throw classify(error, connection, source);
        }
        try {
          return await use(acquired.client);
        } catch (error) {
          // Stopped by its step: the connection is fine (the SDK told the server to cancel), and is kept for others.
          if (options.signal?.aborted === true)
            throw capabilityError(CAPABILITY_ERROR_CODES.timeout, `${source}: the call was stopped by its step`, {
              retryable: true,
              cause: error,
            });
          if (brokeTheConnection(error)) connection.discard(acquired.client);
          if (attempt === 1 && acquired.reused && neverReachedTheServer(error)) continue;
          throw classify(error, connection, source);
        }
      }
    },
    async close() {
      closed = true;
      const connections = [...byServer.values()];
      byServer.clear();
      await Promise.allSettled(connections.map((connection) => connection.close()));
    },
  };
}

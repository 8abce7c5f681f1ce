/**
 * A real MCP server from the SDK (its low-level Server, so tools are declared with plain JSON Schemas and answer
 * exactly what a test says) over Streamable HTTP on 127.0.0.1, port 0, in this process. Stateful: each client gets
 * a session, as most deployed servers do. Every call is recorded with its arguments and `_meta`.
 *
 *   const server = await startMcpServer({ tools: [{ name: 'lookup', answer: (args) => json({ id: args.id }) }] });
 *   bindings: { 'tool:crm.lookup': { kind: 'mcp', transport: 'http', url: server.url, tool: 'lookup' } }
 *
 * A tool the server does not list is answered with the protocol error InvalidParams (as the spec's example
 * servers do); the SDK's McpServer answers it with an `isError` result instead (the stdio fixture shows that one).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';

export interface FixtureTool {
  readonly name: string;
  readonly description?: string;
  /** JSON Schema of the arguments; default: any object. */
  readonly inputSchema?: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations?: ToolAnnotations;
  /** `signal`: aborted when the client cancels the call (`notifications/cancelled`). */
  readonly answer: (
    args: Record<string, unknown>,
    call: { readonly signal: AbortSignal },
  ) => CallToolResult | Promise<CallToolResult>;
}

export interface RecordedToolCall {
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  readonly meta: Record<string, unknown> | undefined;
  readonly sessionId: string | undefined;
}

export interface RunningMcpServer {
  /** The Streamable HTTP endpoint (`…/mcp`). */
  readonly url: string;
  readonly calls: RecordedToolCall[];
  /** The headers of every HTTP request the server received, in order. */
  readonly requestHeaders: Readonly<Record<string, string | string[] | undefined>>[];
  /** Sessions the server has opened (one per client connection). */
  readonly sessions: () => number;
  /** Sessions still open (a client that closes politely ends its session with a DELETE). */
  readonly openSessions: () => number;
  /** Forgets every session, as a restarted server would: the next request of a client is answered 404. */
  forgetSessions(): Promise<void>;
  close(): Promise<void>;
}

/** A result whose structured content is `value` (and, as the spec recommends, the same JSON as text). */
export const json = (value: Record<string, unknown>): CallToolResult => ({
  structuredContent: value,
  content: [{ type: 'text', text: JSON.stringify(value) }],
});

/** A result with text content only. */
export const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** A tool that ran and failed. */
export const toolError = (message: string): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: message }],
});

function mcpServerFor(tools: readonly FixtureTool[], calls: RecordedToolCall[], sessionId: () => string | undefined) {
  const server = new Server({ name: 'cairn-test-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema: { type: 'object' as const, ...tool.inputSchema },
      ...(tool.outputSchema === undefined ? {} : { outputSchema: { type: 'object' as const, ...tool.outputSchema } }),
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const args = request.params.arguments ?? {};
    calls.push({ tool: tool.name, arguments: args, meta: request.params._meta, sessionId: sessionId() });
    return tool.answer(args, { signal: extra.signal });
  });
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  return body === '' ? undefined : (JSON.parse(body) as unknown);
}

export async function startMcpServer(options: { readonly tools: readonly FixtureTool[] }): Promise<RunningMcpServer> {
  const calls: RecordedToolCall[] = [];
  const requestHeaders: Readonly<Record<string, string | string[] | undefined>>[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let opened = 0;

  const http: HttpServer = createServer((req, res) => {
    const fail = (error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    };
    requestHeaders.push({ ...req.headers });
    void (async () => {
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const header = req.headers['mcp-session-id'];
      const id = typeof header === 'string' ? header : undefined;
      let transport = id === undefined ? undefined : transports.get(id);
      if (transport === undefined && id === undefined && isInitializeRequest(body)) {
        const fresh = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sessionId) => {
            transports.set(sessionId, fresh);
            opened += 1;
          },
        });
        fresh.onclose = () => {
          if (fresh.sessionId !== undefined) transports.delete(fresh.sessionId);
        };
        await mcpServerFor(options.tools, calls, () => fresh.sessionId).connect(fresh);
        transport = fresh;
      }
      if (transport === undefined) {
        // The spec's answer to a session the server does not know: 404, and the client starts a new session.
        res.writeHead(id === undefined ? 400 : 404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session' }, id: null }));
        return;
      }
      await transport.handleRequest(req, res, body);
    })().catch(fail);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;

  const forgetSessions = async () => {
    const open = [...transports.values()];
    transports.clear();
    await Promise.allSettled(open.map((transport) => transport.close()));
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    requestHeaders,
    sessions: () => opened,
    openSessions: () => transports.size,
    forgetSessions,
    async close() {
      await forgetSessions();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

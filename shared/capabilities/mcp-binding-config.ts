/**
 * The configuration of an MCP binding (one tool on one Model Context Protocol server), as it appears in
 * CAIRN_BINDINGS:
 *   { "kind": "mcp", "transport": "stdio", "command": "node", "args": ["server.js"], "env": {...}, "tool": "lookup" }
 *   { "kind": "mcp", "transport": "http", "url": "https://tools.internal/mcp", "headers": {...}, "tool": "lookup" }
 * The second speaks Streamable HTTP. Bindings that name the same server share one connection
 * (shared/adapters/mcp/connections.ts); `cairn catalog import --mcp` writes these for every tool it imports.
 */
import { z } from 'zod';
import { secretValueSchema } from './secret-ref.ts';

const common = {
  kind: z.literal('mcp'),
  /** The tool's name as the server lists it (`tools/list`). */
  tool: z.string().min(1).max(256),
  /** One tool call, from request to result; default 60 s (the SDK's request timeout). */
  timeoutMs: z.number().int().positive().max(900_000).optional(),
};

export const mcpStdioBindingSchema = z.strictObject({
  ...common,
  transport: z.literal('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  /**
   * Added to the few variables the SDK passes on (HOME, PATH, ...): a server sees no other secret of ours. A value
   * may be a reference (secret-ref.ts), read when the server is started.
   */
  env: z.record(z.string(), secretValueSchema).optional(),
});

export const mcpHttpBindingSchema = z.strictObject({
  ...common,
  transport: z.literal('http'),
  url: z.url({ protocol: /^https?$/ }),
  /** Each a value or a reference (secret-ref.ts), read for every request (kept a few minutes). */
  headers: z.record(z.string(), secretValueSchema).optional(),
});

export const mcpBindingConfigSchema = z.discriminatedUnion('transport', [mcpStdioBindingSchema, mcpHttpBindingSchema]);
export type McpBindingConfig = z.infer<typeof mcpBindingConfigSchema>;
export type McpStdioBindingConfig = z.infer<typeof mcpStdioBindingSchema>;
export type McpHttpBindingConfig = z.infer<typeof mcpHttpBindingSchema>;

/**
 * A capability bound to one tool on an MCP server (`tools/call`), through the SDK's Client over the connection the
 * server's bindings share (connections.ts).
 *
 * The step's input is the tool's arguments (an object, as the protocol requires). The output is the result's
 * `structuredContent`, else the JSON its text content holds; whether it fits the contract is verification's
 * business (shared/engine/verify.ts), so the client is never given the tool's output schema to check it first.
 * The idempotency key travels in the request's `_meta` so a server may deduplicate side effects itself.
 *
 * Failures: `isError` results and protocol errors are classified in errors.ts; an answer with neither structured
 * content nor JSON text is permanent (E_MALFORMED_ANSWER).
 *
 * The call's signal (a step or run out of `budget.maxSeconds`) cancels the request: the SDK sends the server
 * `notifications/cancelled` for it, so a tool still working is told to stop, and the shared connection stays.
 */

import { CAPABILITY_ERROR_CODES, capabilityError } from '../../capabilities/capability-errors.ts';
import type { McpBindingConfig } from '../../capabilities/mcp-binding-config.ts';
import type { CapabilityBinding, CapabilityCall, CapabilityResult } from '../../ports/capabilities.ts';
import { describeServer, type McpConnections, type McpServerAddress } from './connections.ts';
import { textOf, toolErrorOf } from './errors.ts';

/** The `_meta` key that carries the step generation's idempotency key (run#step#generation). */
export const IDEMPOTENCY_META_KEY = 'cairn/idempotency-key';

export interface McpCapabilityOptions {
  readonly binding: McpBindingConfig;
  readonly connections: McpConnections;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const addressOf = (binding: McpBindingConfig): McpServerAddress =>
  binding.transport === 'stdio'
    ? {
        transport: 'stdio',
        command: binding.command,
        ...(binding.args === undefined ? {} : { args: binding.args }),
        ...(binding.env === undefined ? {} : { env: binding.env }),
      }
    : {
        transport: 'http',
        url: binding.url,
        ...(binding.headers === undefined ? {} : { headers: binding.headers }),
      };

/** A tool result as the SDK returns it: the current shape, or the 2024-10-07 protocol's `toolResult`. */
type ToolAnswer = {
  readonly structuredContent?: unknown;
  readonly content?: readonly unknown[];
  readonly isError?: unknown;
  readonly toolResult?: unknown;
};

/** The step's output from a successful tool result. */
export function outputOf(answer: ToolAnswer, source: string): unknown {
  if (Object.hasOwn(answer, 'toolResult')) return answer.toolResult;
  if (answer.structuredContent !== undefined) return answer.structuredContent;
  const text = textOf(answer.content);
  if (text.trim() === '')
    throw capabilityError(
      CAPABILITY_ERROR_CODES.malformedAnswer,
      `${source} answered with neither structured content nor text to read as JSON`,
      { retryable: false },
    );
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
    throw capabilityError(
      CAPABILITY_ERROR_CODES.malformedAnswer,
      `${source} answered with text that is not JSON (and no structured content): ${JSON.stringify(excerpt)}`,
      { retryable: false, cause: error },
    );
  }
}

export function mcpCapability(options: McpCapabilityOptions): CapabilityBinding {
  const { binding, connections } = options;
  const server = addressOf(binding);
  const where = binding.transport === 'stdio' ? binding.command : binding.url;
  const close = () => connections.close();
  return {
    kind: 'mcp',
    close,
    async invoke(call: CapabilityCall): Promise<CapabilityResult> {
      const source = `${describeServer(server)} tool ${binding.tool} (${call.target})`;
      if (!isRecord(call.input))
        throw capabilityError(
          CAPABILITY_ERROR_CODES.inputSchema,
          `${source} takes an object of arguments; the step's input is ${Array.isArray(call.input) ? 'an array' : JSON.stringify(call.input)}`,
          { retryable: false },
        );
      const args = call.input;
      const timeoutMs = binding.timeoutMs;
      const answer: ToolAnswer = await connections.withClient(
        server,
        (client) =>
          client.callTool(
            { name: binding.tool, arguments: args, _meta: { [IDEMPOTENCY_META_KEY]: call.idempotencyKey } },
            undefined,
            {
              ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }),
              ...(call.signal === undefined ? {} : { signal: call.signal }),
            },
          ),
        {
          source,
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
          ...(call.signal === undefined ? {} : { signal: call.signal }),
        },
      );
      const evidence = { binding: 'mcp', transport: binding.transport, server: where, tool: binding.tool };
      if (answer.isError === true) throw toolErrorOf(answer, source, { target: call.target, tool: binding.tool });
      return { output: outputOf(answer, source), evidence };
    },
  };
}

/**
 * What an MCP call's failure means for the step: retry or give up. The rule is the HTTP binding's, carried over to
 * the protocol: whatever says "not now" (the connection broke or never came up, a timeout, the server's internal
 * error, HTTP 408/429/5xx under Streamable HTTP) is retryable; whatever says "never like this" (an unknown tool or
 * method, invalid params, an invalid request, a refused login, an answer that is not a tool result) is permanent,
 * since the same request will be refused again. A command that cannot be started at all (ENOENT, EACCES) is
 * permanent too: it is configuration, and retries would only spend the step's attempts.
 *
 * A tool that ran and answered `isError` is a different thing: see toolErrorOf.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { CAPABILITY_ERROR_CODES, capabilityError, httpStatusFailure } from '../../capabilities/capability-errors.ts';
import { reportedError } from '../../capabilities/wire.ts';
import type { CapabilityError, ErrorContext } from '../../errors.ts';
import { clipMessage, messageOf } from '../../plan/bounded-text.ts';

const PERMANENT_START_CODES = new Set(['ENOENT', 'EACCES', 'ENOTDIR', 'EISDIR']);

const errnoOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** The JSON-RPC (or SDK) error codes that mean "try again later". */
const RETRYABLE_RPC = new Set<number>([ErrorCode.ConnectionClosed, ErrorCode.RequestTimeout, ErrorCode.InternalError]);

function rpcError(error: McpError, source: string, context: ErrorContext): CapabilityError {
  const retryable = RETRYABLE_RPC.has(error.code);
  const code =
    error.code === ErrorCode.RequestTimeout
      ? CAPABILITY_ERROR_CODES.timeout
      : retryable
        ? CAPABILITY_ERROR_CODES.unavailable
        : CAPABILITY_ERROR_CODES.rejected;
  return capabilityError(code, `${source} failed: ${messageOf(error)}`, {
    retryable,
    details: { rpcCode: error.code },
    cause: error,
    context,
  });
}

function httpError(error: StreamableHTTPError, source: string, context: ErrorContext): CapabilityError {
  const status = error.code ?? -1;
  if (status === -1)
    // An answer that is neither JSON nor an event stream: the endpoint is not an MCP server.
    return capabilityError(CAPABILITY_ERROR_CODES.malformedAnswer, `${source} failed: ${messageOf(error)}`, {
      retryable: false,
      cause: error,
      context,
    });
  const { code, retryable } = httpStatusFailure(status);
  return capabilityError(code, `${source} answered HTTP ${status}: ${messageOf(error)}`, {
    retryable,
    details: { status },
    cause: error,
    context,
  });
}

/** Classifies anything the SDK's client threw while connecting to a server or calling a tool on it. */
export function mcpCallError(error: unknown, source: string, context: ErrorContext = {}): CapabilityError {
  if (error instanceof McpError) return rpcError(error, source, context);
  if (error instanceof StreamableHTTPError) return httpError(error, source, context);
  const name = error instanceof Error ? error.name : '';
  if (name === 'UnauthorizedError')
    return capabilityError(CAPABILITY_ERROR_CODES.rejected, `${source} refused the credentials: ${messageOf(error)}`, {
      retryable: false,
      cause: error,
      context,
    });
  // The SDK checks the result against the protocol's schema and rejects with the ZodError when it does not fit.
  if (name === 'ZodError')
    return capabilityError(CAPABILITY_ERROR_CODES.malformedAnswer, `${source} answered with no valid tool result`, {
      retryable: false,
      cause: error,
      context,
    });
  if (name === 'TimeoutError' || name === 'AbortError')
    return capabilityError(CAPABILITY_ERROR_CODES.timeout, `${source} did not answer in time`, {
      retryable: true,
      cause: error,
      context,
    });
  const errno = errnoOf(error);
  if (errno !== undefined && PERMANENT_START_CODES.has(errno))
    return capabilityError(CAPABILITY_ERROR_CODES.unavailable, `${source} cannot be started: ${messageOf(error)}`, {
      retryable: false,
      cause: error,
      context,
    });
  // Refused or reset connections, a child that went away, "Not connected": the next attempt reconnects.
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${messageOf(error.cause)}` : '';
  return capabilityError(
    CAPABILITY_ERROR_CODES.unavailable,
    `${source} could not be reached: ${messageOf(error)}${cause}`,
    {
      retryable: true,
      cause: error,
      context,
    },
  );
}

/**
 * A tool that answered `isError: true` ran and failed, so by default that failure is permanent: MCP servers report
 * bad arguments, unknown tools (the SDK's McpServer answers those with isError) and business refusals this way,
 * and none of them changes on a retry. A tool that knows better says so in the capability wire's error shape
 * (shared/capabilities/wire.ts), as structured content or as its JSON text:
 *   { "error": { "code": "E_UPSTREAM_BUSY", "message": "...", "retryable": true } }
 * and its code and retryable flag are kept.
 */
export function toolErrorOf(
  result: { readonly structuredContent?: unknown; readonly content?: readonly unknown[] },
  source: string,
  context: ErrorContext = {},
): CapabilityError {
  const text = textOf(result.content);
  const reported = reportedError(result.structuredContent) ?? reportedError(tryJson(text));
  if (reported !== undefined)
    return capabilityError(reported.code, `${source} reported an error: ${messageOf(reported.message)}`, {
      retryable: reported.retryable,
      context,
    });
  const excerpt = clipMessage(text, 500);
  return capabilityError(
    CAPABILITY_ERROR_CODES.toolError,
    `${source} reported an error${excerpt.trim() === '' ? '' : `: ${excerpt.trim()}`}`,
    { retryable: false, context },
  );
}

/** The text blocks of a tool result's content, joined (images, audio and resources carry no text to show). */
export function textOf(content: readonly unknown[] | undefined): string {
  return (content ?? [])
    .filter((block): block is { type: 'text'; text: string } => {
      const b = block as { type?: unknown; text?: unknown } | null;
      return b?.type === 'text' && typeof b.text === 'string';
    })
    .map((block) => block.text)
    .join('\n');
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

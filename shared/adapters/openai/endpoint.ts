/**
 * One OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp's server, LM Studio, a hosted API) through the official
 * `openai` client, and what its failures mean to cairn.
 *
 * No hidden retries: the client runs with `maxRetries: 0`. Retries have one owner each in cairn — the step state
 * machine for agent steps (a retryable CapabilityError burns an attempt and waits out the backoff), the replanner
 * for replans (it asks again while a ModelError is retryable), the caller of `POST /plans` (a 503) — so a 429 is
 * sent once, not three times under a backoff nobody sees.
 *
 * Failure classes: 429 throttled, 408 and timeouts timed out, 5xx and connection failures unavailable (all three
 * retryable); any other 4xx rejected (permanent); a body that is not a chat completion malformed (permanent).
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { isCairnError } from '../../errors.ts';

/** The default wait for one completion: local models on a laptop are slow, yet a step should not hang. */
export const DEFAULT_OPENAI_TIMEOUT_MS = 120_000;

export interface OpenAIEndpoint {
  /** The API's base URL, up to and including `/v1` (Ollama: `http://localhost:11434/v1`). */
  readonly baseUrl: string;
  readonly model: string;
  /**
   * The bearer key, or a function that reads it when the first request needs it (Secrets Manager). Absent: a
   * placeholder, since local servers ignore the header and the client insists on one.
   */
  readonly apiKey?: string | (() => Promise<string>);
  readonly timeoutMs?: number;
}

/** Sent when the endpoint needs no key (Ollama, llama.cpp's server): they ignore it, the client wants one. */
const NO_KEY = 'no-key';

/** A client that never retries on its own and never reads OPENAI_* variables behind the configuration's back. */
export function createOpenAIClient(endpoint: OpenAIEndpoint): OpenAI {
  return new OpenAI({
    baseURL: endpoint.baseUrl,
    apiKey: endpoint.apiKey ?? NO_KEY,
    organization: null,
    project: null,
    maxRetries: 0,
    timeout: endpoint.timeoutMs ?? DEFAULT_OPENAI_TIMEOUT_MS,
  });
}

export type ProviderFailureKind = 'throttled' | 'timeout' | 'unavailable' | 'rejected' | 'malformed';

export interface ProviderFailure {
  readonly kind: ProviderFailureKind;
  readonly retryable: boolean;
  readonly message: string;
  readonly httpStatusCode?: number;
  readonly requestId?: string;
  readonly errorName: string;
}

const RETRYABLE: Readonly<Record<ProviderFailureKind, boolean>> = {
  throttled: true,
  timeout: true,
  unavailable: true,
  rejected: false,
  malformed: false,
};

const kindOf = (error: unknown): ProviderFailureKind => {
  // Order matters: a timeout is a connection error, and both are APIErrors without a status.
  if (error instanceof APIConnectionTimeoutError || error instanceof APIUserAbortError) return 'timeout';
  if (error instanceof APIConnectionError) return 'unavailable';
  if (error instanceof APIError) {
    const status = error.status;
    if (status === 429) return 'throttled';
    if (status === 408) return 'timeout';
    if (status === undefined || status >= 500) return 'unavailable';
    return 'rejected';
  }
  // The body was announced as JSON and is not (the client's response.json() threw).
  if (error instanceof SyntaxError) return 'malformed';
  // The key could not be had (api-key.ts): a secret without a key stays so until someone fixes it.
  const cause = error instanceof Error ? error.cause : undefined;
  if (isCairnError(cause)) return cause.retryable ? 'unavailable' : 'rejected';
  return 'unavailable';
};

/** What a failed request means: its class, whether another attempt may help, and what the provider said. */
export function classifyProviderError(error: unknown): ProviderFailure {
  const kind = kindOf(error);
  const errorName = error instanceof Error ? error.constructor.name || error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  const api = error instanceof APIError ? error : undefined;
  return {
    kind,
    retryable: RETRYABLE[kind],
    message,
    errorName,
    ...(typeof api?.status === 'number' ? { httpStatusCode: api.status } : {}),
    ...(typeof api?.requestID === 'string' ? { requestId: api.requestID } : {}),
  };
}

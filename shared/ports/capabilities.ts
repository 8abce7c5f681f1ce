/**
 * Calling a capability. A target is bound to code by runtime configuration, never by the plan: a built-in
 * function, a Lambda function, an HTTP endpoint, a model (Bedrock, or an OpenAI-compatible endpoint) as an agent, or a
 * tool on an MCP server. Bindings throw CapabilityError with
 * `retryable` set; the executor validates outputs against the catalog contract before anyone downstream sees them.
 */
import type { Capability } from '../plan/schema.ts';

export interface CapabilityCall {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly attempt: number;
  readonly target: string;
  readonly capability: Capability;
  readonly input: unknown;
  /** For agents: the brief material. */
  readonly step: {
    readonly title: string;
    readonly description?: string;
    readonly successCriteria?: { readonly description: string; readonly assert?: string };
  };
  readonly objective: string;
  readonly upstreamOutputs: Readonly<Record<string, unknown>>;
  readonly idempotencyKey: string;
  /**
   * Aborted when the executor stops waiting (the step's or the run's `budget.maxSeconds` ran out): a binding that can
   * stop its work stops; the executor does not wait for one that cannot.
   */
  readonly signal?: AbortSignal;
}

/**
 * Tokens one model call consumed (prompt → input, completion → output). Recorded on the attempt; sum records with
 * shared/engine/usage.ts.
 */
export interface ModelUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /**
   * What the call cost in US dollars, when the capability reported it (a `usage.costUsd` in its answer) or the
   * deployment's price table priced it (CAIRN_PRICES); absent: unpriced, counted as 0.
   */
  readonly costUsd?: number;
}

/** What a run or a step has spent so far (the sums of its attempts' usage), as `GET /runs/{id}` shows it. */
export interface Spend {
  readonly tokens: number;
  readonly costUsd: number;
}

export interface CapabilityResult {
  readonly output: unknown;
  /** Self-reported confidence 0..1 (agents); absent for tools. */
  readonly confidence?: number;
  /** A short note for the reasoning trace. */
  readonly note?: string;
  /** What ran, for the attempt evidence (function ARN, URL, model id...). */
  readonly evidence?: Readonly<Record<string, unknown>>;
  /** Model-backed bindings: the tokens the call consumed. */
  readonly usage?: ModelUsage;
}

export interface CapabilityBinding {
  readonly kind: 'builtin' | 'lambda' | 'http' | 'bedrock' | 'mcp' | 'openai';
  invoke(call: CapabilityCall): Promise<CapabilityResult>;
  /** Releases what the binding holds open (an MCP server's connection or child process); idempotent. */
  close?(): Promise<void>;
}

/** Runtime configuration: target → binding. */
export interface CapabilityRegistry {
  binding(target: string): CapabilityBinding | undefined;
}

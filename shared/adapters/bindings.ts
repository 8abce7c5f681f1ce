/**
 * Turns capability binding configuration (CAIRN_BINDINGS, checked by shared/capabilities/registry.ts) into the
 * adapters that answer the targets: Lambda, HTTP, Bedrock agent, MCP tool. The registry itself stays pure; the Lambda entry
 * and the embedded runtime build their registry here.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import {
  type BindingsConfig,
  bindingsConfigFromJson,
  type CapabilityRegistryView,
  createCapabilityRegistry,
  parseBindingsConfig,
} from '../capabilities/registry.ts';
import { type BuiltinPacksOptions, builtinBindings } from '../capabilities/runtime-registry.ts';
import type { CapabilityBinding } from '../ports/capabilities.ts';
import { bedrockAgentCapability } from './aws/bedrock-agent-capability.ts';
import { bedrockRuntimeClient, lambdaClient } from './aws/clients.ts';
import { lambdaCapability } from './aws/lambda-capability.ts';
import { httpCapability } from './http-capability.ts';
import type { McpConnections } from './mcp/connections.ts';
import { type ApiKeyDeps, apiKeyOf } from './openai/api-key.ts';
import { asCapabilityFailure, createSecretResolver, type SecretResolver, valuesOf } from './secret-values.ts';

export interface BindingDeps {
  /** Clients are created once, on first use, with maxAttempts 1 (the step state machine owns retries). */
  readonly lambdaClient?: () => LambdaClient;
  readonly bedrockClient?: () => BedrockRuntimeClient;
  /** The step output limit (CAIRN_MAX_OUTPUT_BYTES): an HTTP binding reads no more of an answer. */
  readonly maxOutputBytes?: number;
  /** MCP server connections; default: one set per configuration, closed with the registry. */
  readonly mcpConnections?: () => McpConnections;
  /** Where OpenAI-compatible bindings find their keys (`apiKeyEnv`, `apiKeySecret`). */
  readonly apiKeys?: ApiKeyDeps;
  /**
   * Reads what bindings name by reference (headers, MCP environments, `apiKey`: capabilities/secret-ref.ts); default:
   * one resolver for the configuration (environment, files, Secrets Manager), made on first use.
   */
  readonly secrets?: () => SecretResolver;
}

/** The clients bindings get unless deps say otherwise: one attempt per call, the step state machine retries. */
export const defaultLambdaClient = (): LambdaClient => lambdaClient({ maxAttempts: 1 }, 'invoke');
export const defaultBedrockClient = (): BedrockRuntimeClient => bedrockRuntimeClient({ maxAttempts: 1 });

const once = <T>(make: () => T): (() => T) => {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
};

/**
 * A binding whose adapter (and its SDK: the MCP SDK, the openai client) loads on its first call. A stack that never
 * calls it never pays for loading it; `npm start` boots without them.
 */
function lazyBinding(kind: CapabilityBinding['kind'], load: () => Promise<CapabilityBinding>): CapabilityBinding {
  let loaded: Promise<CapabilityBinding> | undefined;
  const get = () => {
    loaded ??= load();
    return loaded;
  };
  return {
    kind,
    invoke: async (call) => (await get()).invoke(call),
    close: async () => {
      if (loaded !== undefined) await (await loaded).close?.();
    },
  };
}

/** Builds the bindings a configuration names; clients are shared by every binding of a kind. */
export function bindingsFromConfig(config: unknown, deps: BindingDeps = {}): Record<string, CapabilityBinding> {
  const checked = parseBindingsConfig(config);
  const secrets = once(deps.secrets ?? (() => createSecretResolver(deps.apiKeys ?? {})));
  const lambda = once(deps.lambdaClient ?? defaultLambdaClient);
  const bedrock = once(deps.bedrockClient ?? defaultBedrockClient);
  const mcp = once(
    async (): Promise<McpConnections> =>
      deps.mcpConnections?.() ??
      (await import('./mcp/connections.ts')).createMcpConnections({ secrets: () => secrets() }),
  );
  const bindings: Record<string, CapabilityBinding> = {};
  for (const [target, binding] of Object.entries(checked)) {
    switch (binding.kind) {
      case 'lambda':
        bindings[target] = lambdaCapability({ functionArn: binding.functionArn, client: lambda() });
        break;
      case 'http':
        bindings[target] = httpCapability({
          url: binding.url,
          ...(binding.timeoutMs === undefined ? {} : { timeoutMs: binding.timeoutMs }),
          ...(binding.headers === undefined ? {} : { headers: valuesOf(binding.headers, secrets) }),
          ...(binding.redirects === undefined ? {} : { redirects: binding.redirects }),
          ...(binding.internal === undefined ? {} : { internal: binding.internal }),
          ...(deps.maxOutputBytes === undefined ? {} : { maxAnswerBytes: deps.maxOutputBytes }),
        });
        break;
      case 'bedrock':
        bindings[target] = bedrockAgentCapability({
          modelId: binding.modelId,
          client: bedrock(),
          ...(binding.maxTokens === undefined ? {} : { maxTokens: binding.maxTokens }),
        });
        break;
      case 'mcp':
        bindings[target] = lazyBinding('mcp', async () => {
          const [{ mcpCapability }, connections] = await Promise.all([import('./mcp/mcp-capability.ts'), mcp()]);
          return mcpCapability({ binding, connections });
        });
        break;
      case 'openai': {
        const { kind: _kind, apiKey: apiKeyRef, apiKeyEnv, apiKeySecret, ...endpoint } = binding;
        const apiKey =
          apiKeyRef === undefined
            ? apiKeyOf({ apiKeyEnv, apiKeySecret }, deps.apiKeys)
            : () => secrets().resolve(apiKeyRef).catch(asCapabilityFailure);
        bindings[target] = lazyBinding('openai', async () =>
          (await import('./openai/openai-agent-capability.ts')).openAIAgentCapability({
            ...endpoint,
            ...(apiKey === undefined ? {} : { apiKey }),
          }),
        );
        break;
      }
    }
  }
  return bindings;
}

export interface RuntimeRegistryOptions extends BuiltinPacksOptions {
  /** The CAIRN_BINDINGS JSON (absent or empty: none)... */
  readonly bindingsJson?: string | undefined;
  /** ...or the configuration it holds, already parsed (Settings.capabilities.bindings); this one wins. */
  readonly bindings?: BindingsConfig;
  /** Bindings made elsewhere, which win over both (the embedded runtime's tests add capabilities this way). */
  readonly extra?: Readonly<Record<string, CapabilityBinding>>;
  readonly deps?: BindingDeps;
}

/**
 * The registry a runtime uses: builtin packs (demo fakes, conformance pack) first, then the configured bindings
 * (CAIRN_BINDINGS), which win for any target they name, then any extra ones. The composition root
 * (shared/composition/root.ts) builds it this way for the Lambdas and the embedded runtime alike.
 */
export function createRuntimeRegistry(options: RuntimeRegistryOptions): CapabilityRegistryView {
  const config = options.bindings ?? bindingsConfigFromJson(options.bindingsJson);
  // AWS clients are only created when the configuration names a Lambda or Bedrock binding.
  return createCapabilityRegistry(
    builtinBindings(options),
    bindingsFromConfig(config, options.deps),
    options.extra ?? {},
  );
}

/**
 * The capability registry: runtime configuration that binds targets to code, never the plan. Deployed, the
 * configuration is JSON in the env var CAIRN_BINDINGS, for example
 *   { "tool:web.search": { "kind": "http", "url": "https://search.internal/run", "timeoutMs": 10000, "internal": true },
 *     "tool:ci.build": { "kind": "lambda", "functionArn": "arn:aws:lambda:eu-west-1:123456789012:function:build" },
 *     "agent:report.writer": { "kind": "bedrock", "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0" },
 *     "tool:crm.lookup": { "kind": "mcp", "transport": "http", "url": "https://crm.internal/mcp", "tool": "lookup" } }
 * Locally, builtin bindings (demo and conformance packs) are passed in code and merged with the configured ones.
 * This module checks the configuration and holds the registry; the adapters a configuration names are built by
 * shared/adapters/bindings.ts, so the capability layer depends on no adapter and no AWS SDK.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { TARGET_PATTERN } from '../plan/schema.ts';
import type { CapabilityBinding, CapabilityRegistry } from '../ports/capabilities.ts';
import { mcpBindingConfigSchema } from './mcp-binding-config.ts';
import { openAIBindingConfigSchema } from './openai-binding-config.ts';
import { secretValueSchema } from './secret-ref.ts';

export const bindingConfigSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('lambda'), functionArn: z.string().min(1) }),
  z.strictObject({
    kind: z.literal('http'),
    url: z.url({ protocol: /^https?$/ }),
    timeoutMs: z.number().int().positive().max(900_000).optional(),
    /** Each a value, or a reference to one (secret-ref.ts): `{ "secret": arn }`, `{ "env": NAME }`, `{ "file": PATH }`. */
    headers: z.record(z.string(), secretValueSchema).optional(),
    redirects: z.enum(['none', 'same-origin']).optional(),
    internal: z.boolean().optional(),
  }),
  z.strictObject({
    kind: z.literal('bedrock'),
    modelId: z.string().min(1),
    maxTokens: z.number().int().positive().max(200_000).optional(),
  }),
  mcpBindingConfigSchema,
  openAIBindingConfigSchema,
]);
export type BindingConfig = z.infer<typeof bindingConfigSchema>;

export const bindingsConfigSchema = z
  .record(z.string().regex(TARGET_PATTERN, { message: 'must be a tool: or agent: target' }), bindingConfigSchema)
  .superRefine((config, ctx) => {
    for (const [target, binding] of Object.entries(config)) {
      if (target.startsWith('human:'))
        ctx.addIssue({ code: 'custom', path: [target], message: 'human targets are answered by people, not bound' });
      else if ((binding.kind === 'bedrock' || binding.kind === 'openai') && !target.startsWith('agent:'))
        ctx.addIssue({
          code: 'custom',
          path: [target],
          message: `a ${binding.kind} binding serves agent: targets only`,
        });
      else if (
        binding.kind === 'openai' &&
        [binding.apiKey, binding.apiKeyEnv, binding.apiKeySecret].filter((given) => given !== undefined).length > 1
      )
        ctx.addIssue({ code: 'custom', path: [target], message: 'give one of apiKey, apiKeyEnv and apiKeySecret' });
    }
  });
export type BindingsConfig = z.infer<typeof bindingsConfigSchema>;

/** Checks a bindings configuration (already parsed JSON); throws ValidationError listing every problem. */
export function parseBindingsConfig(value: unknown): BindingsConfig {
  const parsed = bindingsConfigSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.map((issue) => ({
    code: 'E_BINDINGS_CONFIG',
    path: issue.path.map((p) => `/${String(p)}`).join(''),
    message: issue.message,
  }));
  throw new ValidationError(
    `invalid capability bindings: ${errors.map((e) => `${e.path || '(root)'} ${e.message}`).join('; ')}`,
    errors,
  );
}

/** Reads CAIRN_BINDINGS-style JSON text; empty or absent means no configured bindings. */
export function bindingsConfigFromJson(text: string | undefined): BindingsConfig {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = `CAIRN_BINDINGS is not JSON: ${(error as Error).message}`;
    throw new ValidationError(message, [{ code: 'E_BINDINGS_CONFIG', path: '', message }]);
  }
  return parseBindingsConfig(value);
}

export interface CapabilityRegistryView extends CapabilityRegistry {
  targets(): string[];
  /** Closes every binding that holds something open (MCP connections); the runtime calls it when it stops. */
  close(): Promise<void>;
}

/** A registry over target → binding; later sources win, so configuration can override builtins. */
export function createCapabilityRegistry(
  ...sources: readonly Readonly<Record<string, CapabilityBinding>>[]
): CapabilityRegistryView {
  const byTarget = new Map<string, CapabilityBinding>();
  for (const source of sources) for (const [target, binding] of Object.entries(source)) byTarget.set(target, binding);
  return {
    binding: (target) => byTarget.get(target),
    targets: () => [...byTarget.keys()],
    async close() {
      const closing = new Set(sources.flatMap((source) => Object.values(source)));
      await Promise.allSettled([...closing].map((binding) => binding.close?.()));
    },
  };
}

/** Catalog targets that nobody answers: no binding and not a human gate. */
export function unboundTargets(registry: CapabilityRegistry, targets: Iterable<string>): string[] {
  return [...targets].filter((target) => !target.startsWith('human:') && registry.binding(target) === undefined);
}

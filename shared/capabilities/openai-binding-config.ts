/**
 * The configuration of an agent bound to a model behind an OpenAI-compatible Chat Completions endpoint (Ollama,
 * vLLM, llama.cpp's server, LM Studio, a hosted API), as it appears in CAIRN_BINDINGS:
 *   { "kind": "openai", "baseUrl": "http://localhost:11434/v1", "model": "llama3.1" }
 *   { "kind": "openai", "baseUrl": "https://api.example.com/v1", "model": "m", "apiKeyEnv": "EXAMPLE_API_KEY" }
 *   { "kind": "openai", "baseUrl": "https://api.example.com/v1", "model": "m", "apiKeySecret": "cairn/prod/example" }
 * The key is never in the configuration: `apiKeyEnv` names the environment variable that holds it (npm start), or
 * `apiKeySecret` names a Secrets Manager secret (deployed; the step executor is granted read on it alone). The
 * adapter is shared/adapters/openai/openai-agent-capability.ts.
 */
import { z } from 'zod';
import { ENV_NAME, secretRefSchema } from './secret-ref.ts';

export { ENV_NAME } from './secret-ref.ts';

export const openAIBindingConfigSchema = z.strictObject({
  kind: z.literal('openai'),
  /** Up to and including the API version segment, e.g. `http://localhost:11434/v1`. */
  baseUrl: z.url({ protocol: /^https?$/ }),
  model: z.string().min(1).max(256),
  /** The key by reference (secret-ref.ts): `{ "secret": arn }` deployed, `{ "env": NAME }` or `{ "file": PATH }`. */
  apiKey: secretRefSchema.optional(),
  apiKeyEnv: z.string().regex(ENV_NAME, { message: 'must be an environment variable name' }).optional(),
  /** A Secrets Manager secret name or ARN: its string, or its JSON `{"apiKey": …}`. */
  apiKeySecret: z.string().min(1).max(2048).optional(),
  maxTokens: z.number().int().positive().max(200_000).optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** One completion, request to answer; default 120 s. */
  timeoutMs: z.number().int().positive().max(900_000).optional(),
});
export type OpenAIBindingConfig = z.infer<typeof openAIBindingConfigSchema>;

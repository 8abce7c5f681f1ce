/**
 * What a deployment may put in CAIRN_BINDINGS, which lands in the step executor's environment and in the
 * CloudFormation template: no credential in plaintext. Checked at synth:
 * - a header of an HTTP or MCP binding is given by reference, `{ "secret": "<the secret's ARN>" }`, unless it is one of
 *   the few headers that never carry a credential (PLAIN_HEADERS: accept, content-type, ...);
 * - a stdio MCP server's environment variable whose name looks like a credential (…KEY, …TOKEN, …SECRET, ...) is
 *   given by reference too;
 * - deployed, a reference is a Secrets Manager secret: `{ "env": … }` and `{ "file": … }` are for `npm start` (the
 *   Lambda's environment and its bundle are exactly where the value must not be);
 * and the secrets named are returned, for the step executor's grant (functions.ts: GetSecretValue on exactly those
 * ARNs, to the one function that calls bindings).
 */
import { type BindingConfig, type BindingsConfig, parseBindingsConfig } from '../../shared/capabilities/registry.ts';
import { isSecretRef, type SecretRef, type SecretValue } from '../../shared/capabilities/secret-ref.ts';

/** Headers that say how to talk, never who is talking: they may stay in the template as they are. */
export const PLAIN_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'content-type',
  'user-agent',
]);

/** An environment variable that, by its name, holds a credential. */
const CREDENTIAL_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|AUTH|CREDENTIAL|COOKIE|SESSION|SIGNATURE|PRIVATE)/i;

export interface DeployedBindings {
  readonly bindings: BindingsConfig;
  /** The Secrets Manager secrets the bindings read (ARNs, or names for `apiKeySecret`). */
  readonly secrets: readonly string[];
}

/** Checks bindings for a deployment; throws naming every value that would sit in the template in plaintext. */
export function deployedBindings(value: Readonly<Record<string, unknown>>): DeployedBindings {
  const bindings = parseBindingsConfig(value);
  const problems: string[] = [];
  const secrets: string[] = [];

  const reference = (where: string, ref: SecretRef): void => {
    if ('secret' in ref) secrets.push(ref.secret);
    else
      problems.push(
        `${where} is read from ${'env' in ref ? 'an environment variable' : 'a file'}: deployed, give a Secrets Manager secret ({"secret": "<ARN>"})`,
      );
  };
  const values = (
    where: string,
    record: Readonly<Record<string, SecretValue>> | undefined,
    plainAllowed: (name: string) => boolean,
  ): void => {
    for (const [name, given] of Object.entries(record ?? {})) {
      if (isSecretRef(given)) reference(`${where} ${name}`, given);
      else if (!plainAllowed(name))
        problems.push(`${where} ${name} would be in the template in plaintext: give it as {"secret": "<ARN>"}`);
    }
  };

  for (const [target, binding] of Object.entries(bindings) as [string, BindingConfig][]) {
    if (binding.kind === 'http' || (binding.kind === 'mcp' && binding.transport === 'http'))
      values(`${target}: header`, binding.headers, (name) => PLAIN_HEADERS.has(name.toLowerCase()));
    if (binding.kind === 'mcp' && binding.transport === 'stdio')
      values(`${target}: environment variable`, binding.env, (name) => !CREDENTIAL_NAME.test(name));
    if (binding.kind === 'openai') {
      if (binding.apiKey !== undefined) reference(`${target}: apiKey`, binding.apiKey);
      if (binding.apiKeySecret !== undefined) secrets.push(binding.apiKeySecret);
    }
  }
  if (problems.length > 0) throw new Error(`context bindings: ${problems.join('; ')}`);
  return { bindings, secrets: [...new Set(secrets)] };
}

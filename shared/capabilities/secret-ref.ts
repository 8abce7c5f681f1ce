/**
 * Secrets by reference in capability bindings (CAIRN_BINDINGS): a header of an HTTP or MCP binding, an environment
 * variable of a stdio MCP server, or the key of an OpenAI-compatible model binding may name where its value is
 * instead of holding it:
 *   { "secret": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:crm-token-AbCdEf" }   Secrets Manager (deployed)
 *   { "secret": "arn:…", "field": "token", "prefix": "Bearer " }    a field of a JSON secret, after a fixed prefix
 *   { "env": "CRM_TOKEN" }                                           an environment variable (npm start)
 *   { "file": "/run/secrets/crm-token" }                             a file's text, trimmed (npm start, containers)
 * The value is read when a call needs it and kept a few minutes (shared/adapters/secret-values.ts), so a rotated
 * secret is picked up without a redeploy. Deployed, only `secret` references are accepted for credentials, and the
 * CDK app grants `secretsmanager:GetSecretValue` on exactly those ARNs to the step executor, the one function that
 * calls bindings (infra/constructs/binding-secrets.ts): the template and the Lambda environment hold the ARN, never
 * the value.
 */
import { z } from 'zod';

/** An environment variable's name, as shells and Lambda accept it. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A secret's complete ARN: the name followed by the six characters Secrets Manager appends (a partial ARN would
 * need a wildcard grant, and could name another secret of a longer name).
 */
export const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;

const prefix = z.string().max(64).optional();

export const secretRefSchema = z.union([
  z.strictObject({
    secret: z.string().regex(SECRET_ARN, {
      message:
        "must be a Secrets Manager secret's complete ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>)",
    }),
    /** A field of a secret whose string is a JSON object; absent: the whole string. */
    field: z.string().min(1).max(256).optional(),
    prefix,
  }),
  z.strictObject({ env: z.string().regex(ENV_NAME, { message: 'must be an environment variable name' }), prefix }),
  z.strictObject({ file: z.string().min(1).max(4096), prefix }),
]);
export type SecretRef = z.infer<typeof secretRefSchema>;

/** A value given as it is, or by reference. */
export const secretValueSchema = z.union([z.string(), secretRefSchema]);
export type SecretValue = z.infer<typeof secretValueSchema>;

export const isSecretRef = (value: SecretValue | undefined): value is SecretRef =>
  typeof value === 'object' && value !== null;

/** Where a reference points, for messages (never its value): `secret <arn>`, `env NAME`, `file PATH`. */
export function describeSecretRef(ref: SecretRef): string {
  if ('secret' in ref) return `secret ${ref.secret}${ref.field === undefined ? '' : ` (field ${ref.field})`}`;
  if ('env' in ref) return `environment variable ${ref.env}`;
  return `file ${ref.file}`;
}

/** Every reference in a record of values (headers, an environment). */
export const refsIn = (values: Readonly<Record<string, SecretValue>> | undefined): SecretRef[] =>
  Object.values(values ?? {}).filter(isSecretRef);

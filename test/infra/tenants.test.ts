/**
 * Tenants in the synthesized stack: context webhookTenants (the deployed CAIRN_WEBHOOK_TENANTS) reaches the webhook
 * function alone, and context maxRunningRunsPerTenant (CAIRN_MAX_RUNNING_RUNS_PER_TENANT) the two functions that
 * queue and release runs (the API and the decider); without them, neither variable is set.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FULL_CONTEXT, synthStack } from './synth-stack.ts';

let plain: Template;
let tenants: Template;

beforeAll(() => {
  plain = synthStack(FULL_CONTEXT).template;
  tenants = synthStack({
    ...FULL_CONTEXT,
    webhookTenants: JSON.stringify({ github: 'acme', ci: 'globex' }),
    maxRunningRunsPerTenant: '3',
  }).template;
});

const environmentOf = (fn: Record<string, unknown>): Record<string, unknown> =>
  ((fn.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;

/** The functions (by their construct id: Api, Decider, ...) whose environment has `variable`, and its values. */
function holders(template: Template, variable: string): Record<string, unknown> {
  const found: Record<string, unknown> = {};
  for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
    const path = String((fn.Metadata as Record<string, unknown> | undefined)?.['aws:cdk:path'] ?? '');
    const name = /\/Functions\/([^/]+)\//.exec(path)?.[1];
    const value = environmentOf(fn.Properties as Record<string, unknown>)[variable];
    if (name !== undefined && value !== undefined) found[name] = value;
  }
  return found;
}

describe('webhook tenants (context webhookTenants)', () => {
  it('tell the webhook function alone which tenant each source reports for', () => {
    const found = holders(tenants, 'CAIRN_WEBHOOK_TENANTS');
    expect(Object.keys(found)).toHaveLength(1);
    expect(JSON.parse(String(Object.values(found)[0]))).toEqual({ github: 'acme', ci: 'globex' });
    const secretsAt = holders(tenants, 'CAIRN_WEBHOOK_SECRET_PREFIX');
    expect(Object.keys(found)).toEqual(Object.keys(secretsAt));
    expect(holders(plain, 'CAIRN_WEBHOOK_TENANTS')).toEqual({});
  });

  it('refuse a source that is not a webhook source, and a tenant that cannot be one', () => {
    expect(() => synthStack({ webhookSources: 'github', webhookTenants: '{"gitlab":"acme"}' })).toThrow(
      /webhookTenants: "gitlab" is not one of webhookSources/,
    );
    expect(() => synthStack({ webhookSources: 'github', webhookTenants: '{"github":"a#b"}' })).toThrow(
      /webhookTenants: the tenant of "github" is not a tenant name/,
    );
    expect(() => synthStack({ webhookSources: 'github', webhookTenants: '["github"]' })).toThrow(
      /webhookTenants must be a JSON object/,
    );
  });
});

describe('running runs per tenant (context maxRunningRunsPerTenant)', () => {
  it('bounds the API, which queues runs, and the decider, which frees a slot as a run ends', () => {
    const found = holders(tenants, 'CAIRN_MAX_RUNNING_RUNS_PER_TENANT');
    expect(Object.values(found)).toEqual(['3', '3']);
    expect(Object.keys(found).sort()).toEqual(['Api', 'Decider']);
    expect(holders(plain, 'CAIRN_MAX_RUNNING_RUNS_PER_TENANT')).toEqual({});
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => synthStack({ maxRunningRunsPerTenant: '0' })).toThrow(/maxRunningRunsPerTenant/);
  });
});

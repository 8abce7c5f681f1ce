import { describe, expect, it } from 'vitest';
import {
  catalogFromEnv,
  limitsFromEnv,
  parsePayload,
  plannerModelId,
  required,
  runTaskPayload,
} from '../../../shared/api/lambda-support.ts';
import { isCatalogError, isValidationError } from '../../../shared/errors.ts';
import { DEFAULT_LIMITS } from '../../../shared/plan/validate.ts';

describe('deployment configuration from the environment', () => {
  it('reads the plan limits, with the contract defaults when absent', () => {
    expect(limitsFromEnv({})).toEqual(DEFAULT_LIMITS);
    expect(limitsFromEnv({ CAIRN_MAX_STEPS: '10', CAIRN_MAX_DEPTH: '3' })).toEqual({ maxSteps: 10, maxDepth: 3 });
  });

  it('refuses limits that are not positive integers', () => {
    for (const bad of ['0', '-1', '2.5', 'ten'])
      expect(() => limitsFromEnv({ CAIRN_MAX_STEPS: bad })).toThrow(/CAIRN_MAX_STEPS/);
  });

  it('uses CAIRN_CATALOG when given and the demo catalog otherwise', () => {
    const text = JSON.stringify({
      capabilities: [{ target: 'tool:x', description: 'x', inputSchema: {}, outputSchema: {}, sideEffect: 'none' }],
    });
    expect(catalogFromEnv({ CAIRN_CATALOG: text }).targets()).toEqual(['tool:x']);
    expect(catalogFromEnv({}).targets().length).toBeGreaterThan(1);
    let error: unknown;
    try {
      catalogFromEnv({ CAIRN_CATALOG: '{"capabilities": 1}' });
    } catch (e) {
      error = e;
    }
    expect(isCatalogError(error)).toBe(true);
  });

  it('names the planner model by either variable', () => {
    expect(plannerModelId({})).toBeUndefined();
    expect(plannerModelId({ CAIRN_MODEL_ID: 'm1' })).toBe('m1');
    expect(plannerModelId({ CAIRN_PLANNER_MODEL_ID: 'm2', CAIRN_MODEL_ID: 'm1' })).toBe('m2');
  });

  it('fails loudly on a missing required variable', () => {
    expect(() => required({}, 'CAIRN_TABLE_NAME')).toThrow('CAIRN_TABLE_NAME is not set');
    expect(required({ CAIRN_TABLE_NAME: 't' }, 'CAIRN_TABLE_NAME')).toBe('t');
  });
});

describe('parsePayload', () => {
  it('returns the parsed payload or throws a ValidationError with pointers', () => {
    expect(parsePayload(runTaskPayload, { runId: 'r', extra: 1 })).toEqual({ runId: 'r' });
    let error: unknown;
    try {
      parsePayload(runTaskPayload, { runId: 5 });
    } catch (e) {
      error = e;
    }
    expect(isValidationError(error)).toBe(true);
    expect((error as { errors: { path: string }[] }).errors[0]?.path).toBe('/runId');
  });
});

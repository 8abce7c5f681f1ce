import { describe, expect, it } from 'vitest';
import { createHandler } from '../../../functions/coordinator.ts';
import { coordinatorConfig } from '../../../shared/composition/root.ts';
import { settingsFromEnv } from '../../../shared/config/settings.ts';
import { isValidationError } from '../../../shared/errors.ts';
import type { Coordinator } from '../../../shared/services/coordinator.ts';

/** A coordinator that records which action got which request. */
function recordingCoordinator() {
  const calls: [string, unknown][] = [];
  const record =
    (name: string) =>
    async (request: unknown): Promise<never> => {
      calls.push([name, request]);
      return { action: name } as never;
    };
  const coordinator: Coordinator = {
    rejectPlan: record('rejectPlan'),
    failRun: record('failRun'),
    startRun: record('startRun'),
    awaitRun: record('awaitRun'),
    finalizeRun: record('finalizeRun'),
    recordFailure: record('recordFailure'),
    requestApproval: record('requestApproval'),
    expireApproval: record('expireApproval'),
  };
  return { coordinator, calls };
}

const ref = { runId: 'r1', stepId: 's1', generation: 1 };

describe('coordinator handler', () => {
  it('dispatches each action with its payload', async () => {
    const { coordinator, calls } = recordingCoordinator();
    const handler = createHandler({ coordinator });
    expect(await handler({ action: 'startRun', runId: 'r1' })).toEqual({ action: 'startRun' });
    await handler({ action: 'recordFailure', ...ref, attempt: 2, error: { code: 'E', message: 'm', retryable: true } });
    await handler({ action: 'requestApproval', ...ref, kind: 'review', taskToken: 'tok' });
    await handler({ action: 'expireApproval', ...ref, kind: 'approval' });
    expect(calls).toEqual([
      ['startRun', { action: 'startRun', runId: 'r1' }],
      [
        'recordFailure',
        {
          action: 'recordFailure',
          ...ref,
          attempt: 2,
          error: { code: 'E', message: 'm', retryable: true },
          brief: null,
        },
      ],
      ['requestApproval', { action: 'requestApproval', ...ref, kind: 'review', taskToken: 'tok', brief: null }],
      ['expireApproval', { action: 'expireApproval', ...ref, kind: 'approval' }],
    ]);
  });

  it('turns the nulls Step Functions passes into absent fields', async () => {
    const { coordinator, calls } = recordingCoordinator();
    const handler = createHandler({ coordinator });
    // ExecutorFailed does not know the attempt of a RunStep that failed for good.
    await handler({ action: 'recordFailure', ...ref, attempt: null, error: { code: 'E_EXECUTOR', message: 'm' } });
    await handler({ action: 'expireApproval', ...ref, kind: null });
    await handler({ action: 'finalizeRun', runId: 'r1', timedOut: null, error: null });
    expect(calls[0]?.[1]).toMatchObject({ attempt: undefined, error: { code: 'E_EXECUTOR' } });
    expect(calls[1]?.[1]).toMatchObject({ kind: undefined });
    expect(calls[2]?.[1]).toMatchObject({ timedOut: null, error: null });
  });

  it('refuses an unknown action, one RunStep took over, or a malformed payload with a ValidationError', async () => {
    const { coordinator, calls } = recordingCoordinator();
    const handler = createHandler({ coordinator });
    for (const payload of [
      { action: 'explode', runId: 'r1' },
      { action: 'claimStep', ...ref, executionId: 'arn:x' },
      { action: 'verifyStep', ...ref, attempt: 1 },
      { action: 'completeStep', ...ref, attempt: 1 },
      { action: 'recordFailure', ...ref, attempt: 0, error: { code: 'E', message: 'm' } },
      { action: 'requestApproval', ...ref, kind: 'review' },
      null,
    ]) {
      const error = await handler(payload).catch((e: unknown) => e);
      expect(isValidationError(error), JSON.stringify(payload)).toBe(true);
    }
    expect(calls).toHaveLength(0);
  });
});

const coordinatorConfigFromEnv = (env: Record<string, string>) => coordinatorConfig(settingsFromEnv(env));

describe('the coordinator configuration (settings → coordinatorConfig)', () => {
  it('reads the deployment configuration with defaults', () => {
    expect(coordinatorConfigFromEnv({})).toEqual({
      runDeadlineSeconds: 86_400,
      retryBaseSeconds: 1,
      retryCapSeconds: 60,
      maxSteps: 64,
      maxDepth: 16,
      traceRetention: 'last',
      maxReplans: 3,
    });
    expect(
      coordinatorConfigFromEnv({
        CAIRN_RUN_DEADLINE_SECONDS: '600',
        CAIRN_RETRY_BASE_SECONDS: '2',
        CAIRN_MAX_STEPS: '10',
        CAIRN_TRACE_RETENTION: 'full',
        CAIRN_MAX_REPLANS: '0',
      }),
    ).toMatchObject({
      runDeadlineSeconds: 600,
      retryBaseSeconds: 2,
      maxSteps: 10,
      traceRetention: 'full',
      maxReplans: 0,
    });
  });

  it('refuses a bad value instead of guessing', () => {
    expect(() => coordinatorConfigFromEnv({ CAIRN_TRACE_RETENTION: 'some' })).toThrow(/CAIRN_TRACE_RETENTION/);
    expect(() => coordinatorConfigFromEnv({ CAIRN_RETRY_BASE_SECONDS: '-1' })).toThrow(/CAIRN_RETRY_BASE_SECONDS/);
    expect(() => coordinatorConfigFromEnv({ CAIRN_MAX_REPLANS: 'many' })).toThrow(/CAIRN_MAX_REPLANS/);
  });
});

/**
 * What every Task of the two synthesized machines retries and catches, and the error names cairn's handlers leave
 * for them (functions/root.ts asTransient): the platform's errors and cairn's retryable ones are retried with the
 * same payload, anything else is caught into a state that records the failure.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { asTransient, TRANSIENT_ERROR_NAME } from '../../functions/root.ts';
import { LAMBDA_THROTTLE, LAMBDA_TIMEOUT, TRANSIENT_ERRORS } from '../../infra/constructs/state-machines.ts';
import type { AslDefinition, AslState } from '../../infra/local/synth.ts';
import { ConflictError, ValidationError } from '../../shared/errors.ts';
import { catchOf, type Retrier, state, synthMachines, tasks } from './synthesized-machines.ts';

let run: AslDefinition;
let step: AslDefinition;

beforeAll(() => {
  ({ run, step } = synthMachines());
});

describe('every Task', () => {
  const all = (): [string, AslState][] => [...tasks(run), ...tasks(step)];
  /** The states a Task's final Catch may lead to: one that records the failure, a wait before trying it again, or
   * the machine's one Fail state when the record itself could not be written. */
  const RECORDERS = ['FailRun', 'FinalizeRun', 'ExecutorFailed', 'GateFailed', 'DecisionExpired'];

  it('retries throttles, Lambda service errors, timeouts and cairn’s retryable errors, with the same payload', () => {
    const names = all().map(([name]) => name);
    expect(names.sort()).toEqual(
      [
        'PlanRun',
        'ValidatePlan',
        'RejectPlan',
        'StartRun',
        'AwaitRunFinished',
        'FinalizeRun',
        'FailRun',
        'RunStep',
        'RecordFailure',
        'AwaitDecision',
        'DecisionExpired',
      ].sort(),
    );
    for (const [name, s] of all()) {
      const retried = ((s.Retry as Retrier[] | undefined) ?? []).flatMap((r) => r.ErrorEquals);
      for (const error of [
        'Lambda.TooManyRequestsException',
        'Lambda.ServiceException',
        'Lambda.AWSLambdaException',
        'Lambda.SdkClientException',
        LAMBDA_TIMEOUT,
        // A function whose process died after its work (out of memory, a crash on its way out): every handler is
        // idempotent, so its Task tries again instead of failing the run or counting an attempt.
        'Lambda.Unknown',
        TRANSIENT_ERROR_NAME,
        ...TRANSIENT_ERRORS,
      ])
        expect(retried, `${name} retries ${error}`).toContain(error);
      // Retried, never caught first: a Task's States.ALL retrier would swallow its Catch's routing.
      expect(retried, name).not.toContain('States.ALL');
    }
  });

  it('catches every error into a state that records the failure, so the run never waits for its deadline', () => {
    for (const [definition, fail] of [
      [run, 'RunNotRecorded'],
      [step, 'StepNotRecorded'],
    ] as const) {
      for (const [name, s] of Object.entries(definition.States).filter(([, x]) => x.Type === 'Task')) {
        const all = catchOf(s, 'States.ALL');
        expect(all, `${name} catches States.ALL`).toBeDefined();
        const target = String(all?.Next);
        const recorded = RECORDERS.includes(target) && target !== name;
        expect(recorded || target === fail, `${name} → ${target}`).toBe(true);
        // The platform's errors that outlast Retry: a wait (for a record), or a drawn wait for capacity, then the
        // same Task again.
        const platform = catchOf(s, LAMBDA_THROTTLE);
        if (platform) {
          const again = state(definition, platform.Next);
          const wait = again.Type === 'Pass' ? state(definition, String(again.Next)) : again;
          expect(wait, name).toMatchObject({ Type: 'Wait', Next: name });
        }
      }
      expect(state(definition, fail).Type).toBe('Fail');
    }
  });

  it('leaves a retryable cairn error as TransientError, the name the Tasks retry, and any other as it is', () => {
    const conflict = new ConflictError('the step moved', { retryable: true });
    expect(asTransient(conflict)).toMatchObject({ name: TRANSIENT_ERROR_NAME, cause: conflict });
    const invalid = new ValidationError('bad payload', []);
    expect(asTransient(invalid)).toBe(invalid);
    const sdk = Object.assign(new Error('slow down'), { name: 'ThrottlingException' });
    expect(asTransient(sdk)).toBe(sdk);
    expect(TRANSIENT_ERRORS).toContain(TRANSIENT_ERROR_NAME);
  });

  it('leaves a store call the SDK got no answer to (a timeout, a broken connection) as TransientError', () => {
    const timeout = Object.assign(new Error('connection timed out'), { name: 'TimeoutError' });
    expect(asTransient(timeout)).toMatchObject({ name: TRANSIENT_ERROR_NAME, cause: timeout });
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(asTransient(reset)).toMatchObject({ name: TRANSIENT_ERROR_NAME, cause: reset });
    const refused = Object.assign(new Error('denied'), { name: 'AccessDeniedException' });
    expect(asTransient(refused)).toBe(refused);
  });
});

import { describe, expect, it } from 'vitest';
import type { DeferredStart, RunCommand } from '../../../../shared/engine/run/commands.ts';
import { decide } from '../../../../shared/engine/run/decide.ts';
import type { RunEvent } from '../../../../shared/engine/run/events.ts';
import { START_RETRY_CAP_SECONDS, startRetryDelaySeconds } from '../../../../shared/engine/run/rules/start-pacing.ts';
import { stepExecutionInput } from '../../../../shared/ports/executions.ts';
import { DrivenRun, planOf, typesOf } from '../../../support/decider.ts';

type Deferred = Extract<RunEvent, { type: 'StartsDeferred' }>;

const wide = planOf([{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd', dependsOn: ['a'] }]);

/** The starts of `ids` as the shell hands them back: the executions the decider started them under. */
function startsOf(run: DrivenRun, ...ids: string[]): DeferredStart[] {
  return ids.map((id) => ({
    execution: run.execution(id),
    input: stepExecutionInput({ runId: run.state.run.runId, stepId: id, generation: run.step(id).generation }),
  }));
}

const deferredOf = (events: readonly RunEvent[]): Deferred => {
  const found = events.find((e): e is Deferred => e.type === 'StartsDeferred');
  if (found === undefined) throw new Error(`no StartsDeferred in ${typesOf(events).join(', ')}`);
  return found;
};

describe('startRetryDelaySeconds', () => {
  it('grows with each deferral and stays under the cap, whatever the jitter', () => {
    for (const jitter of [0, 0.5, 0.999]) {
      const delays = Array.from({ length: 14 }, (_, retry) => startRetryDelaySeconds(retry, 0, jitter));
      for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1] as number);
      expect(Math.max(...delays)).toBeLessThanOrEqual(START_RETRY_CAP_SECONDS);
      expect(delays[0]).toBeGreaterThanOrEqual(1);
    }
  });

  it('waits at least as long as the shell says its pacer needs', () => {
    expect(startRetryDelaySeconds(0, 40, 0)).toBeGreaterThanOrEqual(40);
    expect(startRetryDelaySeconds(0, 40, 0.9)).toBeGreaterThan(40);
  });

  it('spreads the same deferral over different moments by its jitter', () => {
    expect(startRetryDelaySeconds(6, 0, 0)).not.toBe(startRetryDelaySeconds(6, 0, 0.9));
  });
});

describe('the run decider, when the shell could not start executions', () => {
  it('defers throttled starts to a timer instead of failing their steps', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: wide });
    const events = run.apply({
      kind: 'StartsThrottled',
      starts: startsOf(run, 'a', 'b'),
      retry: 0,
      retryAfterSeconds: 30,
    });
    expect(typesOf(events)).toEqual(['StartsDeferred']);
    const deferred = deferredOf(events);
    expect(deferred.retry).toBe(1);
    expect(Date.parse(deferred.until) - Date.parse(run.now())).toBeGreaterThanOrEqual(30_000);
    expect(run.status('a')).toBe('running');
    expect(run.status('b')).toBe('running');
    expect(run.state.run.status).toBe('running');
  });

  it('schedules the retry as a timer and starts the same executions again when it fires', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: wide });
    const starts = startsOf(run, 'a', 'b');
    const at = run.now();
    const decided = decide(run.state, {
      kind: 'StartsThrottled',
      at,
      starts,
      retry: 0,
      retryAfterSeconds: 0,
    } as RunCommand);
    const [timer] = decided.effects;
    expect(timer).toMatchObject({ kind: 'schedule', command: { kind: 'RetryStarts', retry: 1, starts } });
    run.state = decided.state;

    const retried = decide(run.state, { kind: 'RetryStarts', at: run.now(), starts, retry: 1 } as RunCommand);
    expect(typesOf(retried.events)).toEqual(['StartsRetried']);
    expect(retried.effects).toEqual(
      starts.map((start) => ({ kind: 'startStep', name: start.execution, input: start.input, retry: 1 })),
    );
  });

  it('backs off longer on each further throttle of the same starts, never failing them', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: wide });
    const starts = startsOf(run, 'a');
    const waits: number[] = [];
    for (let retry = 0; retry < 12; retry++) {
      const deferred = deferredOf(run.apply({ kind: 'StartsThrottled', starts, retry, retryAfterSeconds: 0 }));
      waits.push(Date.parse(deferred.until) - Date.parse(deferred.at));
      run.apply({ kind: 'RetryStarts', starts, retry: deferred.retry });
    }
    expect(waits.at(-1)).toBeGreaterThan(waits[0] as number);
    expect(Math.max(...waits)).toBeLessThanOrEqual(START_RETRY_CAP_SECONDS * 1000);
    expect(run.status('a')).toBe('running');
    expect(run.events.some((e) => e.type === 'StepFailed' || e.type === 'RunFinished')).toBe(false);
  });

  it('starts the step normally once its execution runs after a deferral', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: wide });
    const starts = startsOf(run, 'a');
    run.apply({ kind: 'StartsThrottled', starts, retry: 0, retryAfterSeconds: 0 });
    run.apply({ kind: 'RetryStarts', starts, retry: 1 });
    expect(typesOf(run.succeed('a'))).toEqual(['StepSucceeded:a', 'StepStarted:d']);
  });

  it('drops a start its step no longer wants: cancelled, or moved to another generation', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: wide });
    const starts = startsOf(run, 'a', 'b');
    run.apply({ kind: 'CancelRun', compensate: false, by: 'ana' });
    expect(run.apply({ kind: 'StartsThrottled', starts, retry: 0, retryAfterSeconds: 0 })).toEqual([]);
    expect(run.apply({ kind: 'RetryStarts', starts, retry: 1 })).toEqual([]);
  });

  it('fails the run with its deadline, not the throttle, when the deadline passes while starts wait', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: wide });
    const starts = startsOf(run, 'a', 'b', 'c');
    run.apply({ kind: 'StartsThrottled', starts, retry: 0, retryAfterSeconds: 0 });
    run.advance(3600);
    const events = run.apply({ kind: 'FinalizeRun', opening: 0, timedOut: true });
    expect(typesOf(events)).toContain('RunFinished');
    expect(run.state.run.status).toBe('failed');
    expect(run.state.run.terminal).toMatchObject({ state: 'failed', reason: 'deadline' });
    for (const id of ['a', 'b', 'c']) expect(run.step(id).error?.code).toBe('E_DEADLINE');
    // The deferral's timer fires after the end: nothing is started again.
    expect(run.apply({ kind: 'RetryStarts', starts, retry: 1 })).toEqual([]);
  });
});

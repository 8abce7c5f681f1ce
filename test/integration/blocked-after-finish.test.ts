/**
 * A failure's follow-ups, repeated while an invalidation holds new generations in a run a stale look finished
 * (issue 10, chaos seed 23 run 57): the invalidation moved the failed step's downstream to a new generation while
 * the run was running, a look at the run that had read the steps before they moved wrote its ending, and a RunStep of
 * the failed step, repeated after its answer was lost, blocked the new generations: StepBlocked was announced after
 * RunFinished, before the invalidation reopened the run. The new generations are the invalidation's: it reopens the
 * run, then blocks what cannot run and looks at the run's end.
 */
import { describe, expect, it } from 'vitest';
import type { LocalHandler } from '../../infra/local/local-executions.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createInterpreter } from '../../shared/services/interpreter.ts';
import { createInvalidator } from '../../shared/services/invalidator.ts';
import { answerWaiter, writeEnding } from '../../shared/services/run-end.ts';
import { plan, step, stepOf, summary, useTestStack, waitForRun } from '../support/local-stack.ts';
import { interceptStore, secondProcessDeps } from '../support/second-process.ts';
import { createHandlerFaults, type Payload } from '../support/stack-faults.ts';

const handlers = createHandlerFaults();
let runStep: LocalHandler | undefined;
// No replanner answers the failure: the run fails with its downstream blocked.
const stack = useTestStack({
  limits: { maxReplans: 0 },
  wrapHandler: (key, handler) => {
    if (key === 'StepExecutor') runStep = handler;
    return handlers.wrap(key, handler);
  },
});

interface AuditEvent {
  readonly type: string;
  readonly at: string;
  readonly stepId?: string;
  readonly generation?: number;
}

async function auditLog(runId: string): Promise<AuditEvent[]> {
  const { json } = await stack.request('GET', `/runs/${runId}/events`);
  return (json as { events: AuditEvent[] }).events;
}

/**
 * Events strictly later than a RunFinished and earlier than the RunReopened that follows it (as the chaos suite's
 * after-finish invariant reads the log: by time, since two writes in one millisecond have no order).
 */
function announcedWhileFinished(log: readonly AuditEvent[]): string[] {
  const time = (e: AuditEvent) => Date.parse(e.at);
  return log.flatMap((finish) => {
    if (finish.type !== 'RunFinished') return [];
    const reopenedAt = log.filter((e) => e.type === 'RunReopened' && time(e) >= time(finish)).map(time);
    const until = Math.min(Number.POSITIVE_INFINITY, ...reopenedAt);
    return log
      .filter((e) => e.type !== 'RunReopened' && time(e) > time(finish) && time(e) < until)
      .map((e) => `${e.type} ${e.stepId ?? ''}#${e.generation ?? ''}`);
  });
}

describe('a failed step whose follow-ups are repeated while an invalidation holds a finished run', () => {
  it('blocks nothing before the run reopens; the invalidation blocks the new generation and the run fails again', async () => {
    const runId = await stack.startRun({
      plan: plan('follow-ups repeated under an invalidation', [
        step(stack, 'A', T.fail, { input: { message: 'for good', retryable: false } }),
        step(stack, 'B', T.echo, { input: { value: 'B' }, dependsOn: ['A'] }),
      ]),
    });
    const failed = await waitForRun(stack, runId);
    expect(failed.status, summary(failed)).toBe('failed');
    await stack.settled();
    const repeatOfA = handlers.invocations('StepExecutor').find((p: Payload) => p.runId === runId && p.stepId === 'A');
    expect(repeatOfA).toBeDefined();

    const ctx = createInterpreter(secondProcessDeps(stack));
    let raced = 0;
    const store: Store = interceptStore(stack.store, ['updateRun'], async (call, args) => {
      if (raced === 0 && args[0] === runId && JSON.stringify(args).includes('StepsInvalidated')) {
        raced++;
        // B is in its generation 2 now. What a settleRun that listed the steps before B moved writes, after the
        // invalidation's re-read of the run; then A's RunStep, repeated by Step Functions after its answer was lost.
        const terminal = { state: 'failed', reason: 'step_failed', evidence: {}, at: ctx.now() } as const;
        await answerWaiter(ctx, await writeEnding(ctx, runId, ['running'], terminal));
        await runStep?.(repeatOfA);
      }
      return call();
    });
    const invalidator = createInvalidator(secondProcessDeps(stack, store));

    const result = await invalidator.invalidateStep({ runId, stepId: 'B', reason: 'stale' });

    expect(raced).toBe(1);
    expect(result).toMatchObject({ stepIds: ['B'], reopened: true });
    const done = await waitForRun(
      stack,
      runId,
      (run) => run.status === 'failed' && stepOf(run, 'B').generation === 2 && stepOf(run, 'B').status === 'blocked',
      10_000,
    );
    expect(done.steps.map((s) => `${s.id}${s.generation}:${s.status}`)).toEqual(['A1:failed', 'B2:blocked']);
    await stack.settled();
    const log = await auditLog(runId);
    // Before, the repeat blocked B#2 between the second RunFinished and the RunReopened (announced after the run's
    // end), and the reopened run then stayed running: the invalidation found B blocked and looked at nothing.
    expect(announcedWhileFinished(log)).toEqual([]);
    expect(log.filter((e) => e.type === 'StepBlocked' && e.generation === 2).map((e) => e.stepId)).toEqual(['B']);
    expect(log.filter((e) => e.type === 'RunReopened')).toHaveLength(2);
  }, 60_000);
});

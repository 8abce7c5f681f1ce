/**
 * A gate's attempt must not stay `running` in a cancelled run whose gate was closed by a cancellation and then moved
 * to a new generation (issue 10, chaos seed 22 run 193). The cancellation closed the waiting gate, then failed to
 * close its attempt (it died there) and was sent again; meanwhile an invalidation (one that read the run before
 * the cancel's mark) started the gate's next generation from the cancelled one. The ended generation's history did
 * not keep the claim of a generation closed from outside, so the repeat's sweep no longer knew the attempt was
 * there, and it was left running.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { createInterpreter } from '../../shared/services/interpreter.ts';
import { invalidateInRun } from '../../shared/services/invalidation-run.ts';
import { getRun, plan, statusOf, step, stepOf, summary } from '../support/local-stack.ts';
import { secondProcessDeps } from '../support/second-process.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

interface AttemptView {
  readonly generation: number;
  readonly attempt: number;
  readonly outcome: string;
}

async function until<T>(read: () => Promise<T>, holds: (value: T) => boolean, what: string): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() - started > 10_000) throw new Error(`${what}: not within 10 s (${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a gate closed by a cancellation that failed part-way, then moved to a new generation', () => {
  it('has its attempt closed when the cancellation is sent again', async () => {
    const objective = 'cancelled gate moved on';
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'G', T.approver, {
          input: { note: 'G' },
          approval: { question: 'Let G through?', timeoutSeconds: 120 },
        }),
      ]),
    });
    await until(
      () => getRun(stack, runId),
      (run) => statusOf(run, 'G') === 'awaiting_approval',
      'the gate waits',
    );
    // An invalidation that read the run before the cancel marked it (one that reads it after is refused).
    const before = await stack.store.getRun(runId);
    if (!before) throw new Error(`no run ${runId}`);
    // The cancellation closes G, then dies as it closes G's attempt (a throttle would be tried again in place): it
    // fails, the run still running.
    const throttled = faults.throwOn({
      method: 'updateAttempt',
      when: 'before',
      match: (call) => (call.args[0] as { runId?: string }).runId === runId,
      crash: true,
    });
    const first = await stack.request('POST', `/runs/${runId}/cancel`);
    await throttled.fired;
    expect(first.status).not.toBe(200);
    expect(stepOf(await getRun(stack, runId), 'G').status).toBe('cancelled');

    const invalidated = await invalidateInRun(createInterpreter(secondProcessDeps(stack)), before, ['G'], 'stale');
    expect(invalidated.stepIds).toEqual(['G']);
    const again = await stack.request('POST', `/runs/${runId}/cancel`);
    expect(again.status).toBe(200);

    const done = await until(
      () => getRun(stack, runId),
      (run) => run.status === 'cancelled',
      'the run is cancelled',
    );
    expect(stepOf(done, 'G').generation, summary(done)).toBe(2);
    const { json } = await stack.request('GET', `/runs/${runId}/steps/G`);
    const attempts = (json as { attempts: AttemptView[] }).attempts;
    // Before, generation 1's attempt stayed running: the history of generation 1 (cancelled) had lost its claim.
    expect(attempts.filter((a) => a.outcome === 'running')).toEqual([]);
    expect(attempts.find((a) => a.generation === 1)).toMatchObject({ attempt: 1, outcome: 'failed' });
  }, 60_000);
});

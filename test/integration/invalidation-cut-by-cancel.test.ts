/**
 * An invalidation cut short by a cancellation (issue 10, chaos seed 33 run 53): its first try moved part of a chain's
 * scope (K1 and K2 to generation 2) and failed before it moved K3 (a throttle); the run was then cancelled, and the
 * try after that found the run cancelled, or marked by a cancel not yet through. Refusing it outright left K3's
 * result standing on K2's superseded generation while K2 closed `cancelled` ("K3 succeeded though its upstream
 * K2=cancelled never released it"). The repeat finishes the moves its key began, starts and announces nothing, and
 * the scope ends consistent: every moved step `cancelled` in its new generation, its old result in its history.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { createCoordinator } from '../../shared/services/coordinator.ts';
import { createInterpreter } from '../../shared/services/interpreter.ts';
import { invalidateInRun } from '../../shared/services/invalidation-run.ts';
import { auditLog } from '../support/api-reads.ts';
import {
  plan,
  type RunView,
  statusOf,
  step,
  stepOf,
  summary,
  useTestStack,
  waitForRun,
} from '../support/local-stack.ts';
import { injectedCrash, injectedThrottle, interceptStore, secondProcessDeps } from '../support/second-process.ts';

const stack = useTestStack();
const KEY = 'invalidation#cut-by-cancel';

/**
 * A live run whose chain K1 → K2 → K3 has succeeded (S, waiting for a person, keeps it running); `mutating`: K3
 * makes a ledger entry, in a segment a compensating cancel undoes.
 */
async function chainDone(objective: string, mutating = false): Promise<string> {
  const echo = (id: string, dependsOn: string[] = []) => step(stack, id, T.echo, { input: { value: id }, dependsOn });
  const k3 = mutating
    ? step(stack, 'K3', T.ledger, { input: { entry: { id: 'K3' } }, dependsOn: ['K2'], segment: 'release' })
    : echo('K3', ['K2']);
  const runId = await stack.startRun({
    plan: plan(objective, [
      echo('K1'),
      echo('K2', ['K1']),
      k3,
      step(stack, 'S', T.approver, { approval: { question: 'May S go ahead?', timeoutSeconds: 120 } }),
    ]),
  });
  await waitForRun(stack, runId, (run) => ['K1', 'K2', 'K3'].every((id) => statusOf(run, id) === 'succeeded'));
  return runId;
}

/**
 * The first try: K1's and K2's moves land, then K3's is throttled before it reaches the store (held until the other
 * two landed: the try's moves run at once) and the try fails.
 */
async function firstTryCutShort(runId: string): Promise<void> {
  const run = await stack.store.getRun(runId);
  if (!run) throw new Error(`no run ${runId}`);
  let landed = 0;
  let othersLanded: () => void = () => {};
  const others = new Promise<void>((resolve) => {
    othersLanded = resolve;
  });
  const store = interceptStore(stack.store, ['startGeneration'], async (call, args) => {
    if (args[0] !== runId) return call();
    if (args[1] === 'K3') {
      await others;
      throw injectedThrottle();
    }
    const result = await call();
    if (++landed === 2) othersLanded();
    return result;
  });
  const first = createInterpreter(secondProcessDeps(stack, store));
  await expect(invalidateInRun(first, run, ['K1'], 'stale', { key: KEY })).rejects.toThrow(/Rate exceeded/);
  const steps = await stack.store.getSteps(runId, ['K1', 'K2', 'K3']);
  expect(steps.map((s) => `${s.stepId}@${s.generation}`).sort()).toEqual(['K1@2', 'K2@2', 'K3@1']);
}

/** The repeat of the first try, reading the run as it is now. */
async function repeat(runId: string) {
  const run = await stack.store.getRun(runId);
  if (!run) throw new Error(`no run ${runId}`);
  return invalidateInRun(createInterpreter(secondProcessDeps(stack)), run, ['K1'], 'stale', { key: KEY });
}

/** Every step of the scope `cancelled` in generation 2 (K3's success kept in its history), and nothing after the end. */
async function expectScopeClosed(runId: string, done: RunView): Promise<void> {
  expect(done.status, summary(done)).toBe('cancelled');
  expect(
    ['K1', 'K2', 'K3'].map((id) => `${id} ${stepOf(done, id).status} ${stepOf(done, id).generation}`),
    summary(done),
  ).toEqual(['K1 cancelled 2', 'K2 cancelled 2', 'K3 cancelled 2']);
  const k3 = await stack.store.getStep(runId, 'K3');
  expect(k3?.history?.map((h) => `${h.generation} ${h.status}`)).toEqual(['1 succeeded']);
  const log = (await auditLog(stack, runId)).map((e) => `${e.type}${e.stepId ? ` ${e.stepId}` : ''}`);
  expect(log.filter((e) => e.startsWith('StepStarted K')).sort(), log.join(' ')).toEqual([
    'StepStarted K1',
    'StepStarted K2',
    'StepStarted K3',
  ]);
  expect(
    log.filter((e) => e === 'RunFinished'),
    log.join(' '),
  ).toHaveLength(1);
  expect(log.at(-1), log.join(' ')).toBe('RunFinished');
}

describe('an invalidation cut short by a cancellation', () => {
  it('moves the rest of its scope on its repeat after the run was cancelled, and closes it cancelled', async () => {
    const runId = await chainDone('invalidation cut by a cancel');
    await firstTryCutShort(runId);
    await createCoordinator(secondProcessDeps(stack)).cancelRun(runId, { requestedBy: 'test' });
    expect(stepOf(await waitForRun(stack, runId), 'K3').status).toBe('succeeded');

    const repeated = await repeat(runId);

    expect(repeated.stepIds).toEqual(['K1', 'K2', 'K3']);
    await stack.settled();
    await expectScopeClosed(runId, await waitForRun(stack, runId));
  });

  it('finishes a cancel that died after its mark once it has moved the rest', async () => {
    const runId = await chainDone('invalidation cut by a dying cancel');
    await firstTryCutShort(runId);
    const dying = interceptStore(stack.store, ['transitionStep'], async (call, args) => {
      if (args[0] === runId) throw injectedCrash();
      return call();
    });
    await expect(
      createCoordinator(secondProcessDeps(stack, dying)).cancelRun(runId, { requestedBy: 'test' }),
    ).rejects.toThrow(/process died/);
    expect(await stack.store.getRun(runId)).toMatchObject({ status: 'running', cancelling: true });

    const repeated = await repeat(runId);

    expect(repeated.stepIds).toEqual(['K1', 'K2', 'K3']);
    await stack.settled();
    const done = await waitForRun(stack, runId);
    await expectScopeClosed(runId, done);
    expect(stepOf(done, 'S').status, summary(done)).toBe('cancelled');
  });

  it('moves nothing in a cancelled run for an invalidation that had moved nothing before the cancel', async () => {
    const runId = await chainDone('fresh invalidation of a cancelled run');
    await createCoordinator(secondProcessDeps(stack)).cancelRun(runId, { requestedBy: 'test' });

    const refused = await repeat(runId);

    expect(refused.stepIds).toEqual([]);
    const done = await waitForRun(stack, runId);
    expect(
      ['K1', 'K2', 'K3'].map((id) => `${id} ${stepOf(done, id).status} ${stepOf(done, id).generation}`),
      summary(done),
    ).toEqual(['K1 succeeded 1', 'K2 succeeded 1', 'K3 succeeded 1']);
  });

  it('leaves the scope as it is in a run cancelled with compensation: the undo decides from the current results', async () => {
    const runId = await chainDone('invalidation cut by a compensating cancel', true);
    await firstTryCutShort(runId);
    await createCoordinator(secondProcessDeps(stack)).cancelRun(runId, { requestedBy: 'test', compensate: true });
    const cancelled = await waitForRun(stack, runId);
    expect(stepOf(cancelled, 'K3').status, summary(cancelled)).toBe('compensated');

    const repeated = await repeat(runId);

    // Moved on, K3's side effect would sit in its history, out of the undo's sight; it is undone where it stands.
    expect(repeated.stepIds).toEqual([]);
    const done = await waitForRun(stack, runId);
    expect(stepOf(done, 'K3'), summary(done)).toMatchObject({ status: 'compensated', generation: 1 });
  });
});

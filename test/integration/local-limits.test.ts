/**
 * AWS's limits in the embedded Step Functions, on the REAL synthesized machines with scripted handlers: the API
 * refuses what Step Functions refuses (names, 256 KB inputs and outputs) with the service's error names, and an
 * execution fails with `States.DataLimitExceeded` (uncaught, as on AWS) or a Lambda's `Function.ResponseSizeTooLarge`
 * (caught, as a function error is) where AWS's would.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AWS_LIMITS, jsonBytes } from '../../infra/local/aws-limits.ts';
import { createLocalExecutions, type LocalExecutions, type LocalHandler } from '../../infra/local/local-executions.ts';
import { type ExtractedMachines, synthesizeStateMachines } from '../../infra/local/synth.ts';
import { stepExecutionInput, stepExecutionName } from '../../shared/ports/executions.ts';

type Payload = Record<string, unknown> & { action?: string; taskToken?: string };

let machines: ExtractedMachines;
let executions: LocalExecutions | undefined;
let calls: Payload[];

beforeAll(() => {
  machines = synthesizeStateMachines();
}, 120_000);
afterEach(() => {
  executions?.close();
  executions = undefined;
});

/** A string whose JSON is exactly `bytes` bytes (the quotes included). */
const ofBytes = (bytes: number): string => 'x'.repeat(bytes - 2);

function boot(
  stepExecutor: (payload: Payload) => unknown,
  coordinator: (payload: Payload) => unknown = () => ({}),
  concurrency?: Record<string, number>,
) {
  // Each boot counts its own calls: an invocation of the previous test's executions that waited for a turn of the
  // loop (loop-turns.ts) may still run after they closed, and must not count here.
  const own: Payload[] = [];
  calls = own;
  const handler =
    (fn: string, script: (payload: Payload) => unknown): LocalHandler =>
    async (payload) => {
      own.push({ fn, ...(payload as Payload) });
      return script(payload as Payload);
    };
  executions = createLocalExecutions({
    definitions: { run: machines.run, step: machines.step },
    functionOf: machines.functionOf,
    backoffMs: 1,
    onError: () => {},
    ...(concurrency ? { concurrency } : {}),
    handlers: {
      Planner: handler('Planner', (p) => ({ runId: p.runId })),
      Validator: handler('Validator', () => ({ valid: true, errors: [] })),
      StepExecutor: handler('StepExecutor', stepExecutor),
      Coordinator: handler('Coordinator', (p) =>
        p.action === 'recordFailure' ? { action: 'done', attempt: 1 } : coordinator(p),
      ),
    },
  });
  return executions;
}

const STEP = { runId: 'r1', stepId: 'big', generation: 1 };
const NAME = stepExecutionName('r1', 'big', 1);
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as Error,
  );
const infoOf = (ex: LocalExecutions, name: string) => ex.list().find((info) => info.name === name);
const actions = () => calls.map((c) => (c.fn === 'Coordinator' ? String(c.action) : String(c.fn)));

/** A step execution waiting at its gate (a step that asks for a decision, then is done with it), and its token. */
async function awaitingGate(): Promise<{ ex: LocalExecutions; token: string }> {
  const ex = boot(
    (p) => (p.decision ? { action: 'done', attempt: 1 } : { action: 'await', kind: 'gate', timeoutSeconds: 60 }),
    () => ({ approvalId: 'a1' }),
  );
  await ex.start('step', NAME, stepExecutionInput(STEP));
  await ex.idle();
  return { ex, token: String(calls.find((c) => c.action === 'requestApproval')?.taskToken) };
}

describe('StartExecution limits', () => {
  it('refuses a name over 80 characters with a ValidationException and starts nothing', async () => {
    const ex = boot(() => ({ action: 'done', attempt: 1 }));
    const error = await rejection(ex.start('step', 'n'.repeat(81), stepExecutionInput(STEP)));
    expect(error).toMatchObject({ name: 'ValidationException', $fault: 'client' });
    expect(error?.message).toContain('Member must have length less than or equal to 80');
    expect(ex.list()).toEqual([]);
    await expect(ex.start('step', 'n'.repeat(80), stepExecutionInput(STEP))).resolves.toMatchObject({ started: true });
  });

  it('refuses a name with a character outside [A-Za-z0-9-_] as InvalidName', async () => {
    const ex = boot(() => ({ action: 'done', attempt: 1 }));
    for (const name of ['a.b', 'a b', 'a/b', 'ä']) {
      await expect(rejection(ex.start('step', name, stepExecutionInput(STEP)))).resolves.toMatchObject({
        name: 'InvalidName',
      });
    }
    expect(ex.list()).toEqual([]);
  });

  it('refuses an input over 256 KB of UTF-8 JSON with a ValidationException, and takes one at the limit', async () => {
    const ex = boot(() => ({ action: 'done', attempt: 1 }));
    const base = stepExecutionInput(STEP);
    const padding = AWS_LIMITS.statePayloadBytes - jsonBytes({ ...base, pad: '' });
    // Multibyte characters count by their UTF-8 bytes, not by characters.
    const over = { ...base, pad: 'é'.repeat(Math.ceil((padding + 1) / 2)) };
    const error = await rejection(ex.start('step', NAME, over));
    expect(error).toMatchObject({ name: 'ValidationException' });
    expect(error?.message).toContain("Value at 'input'");
    expect(ex.list()).toEqual([]);

    const at = { ...base, pad: 'x'.repeat(padding) };
    expect(jsonBytes(at)).toBe(AWS_LIMITS.statePayloadBytes);
    await expect(ex.start('step', NAME, at)).resolves.toMatchObject({ started: true });
  });
});

describe('state payloads inside an execution', () => {
  it('fails the execution with States.DataLimitExceeded, uncaught, when RunStep returns over 256 KB', async () => {
    const ex = boot(() => ({ action: 'done', attempt: 1, note: ofBytes(AWS_LIMITS.statePayloadBytes) }));
    await ex.start('step', NAME, stepExecutionInput(STEP));
    await ex.idle();

    expect(infoOf(ex, NAME)).toMatchObject({ status: 'FAILED', error: { error: 'States.DataLimitExceeded' } });
    expect(infoOf(ex, NAME)?.error?.cause).toContain("'RunStep' returned a result");
    // Neither Retry nor the States.ALL Catch handled it: RunStep ran once and nothing recorded a failure.
    expect(actions()).toEqual(['StepExecutor']);
  });

  it('fails with States.DataLimitExceeded when a result fits but the state output it makes does not', async () => {
    // AwaitDecision puts the answer at $.decision of its input: an answer within SendTaskSuccess's limit, plus the
    // rest of the state, is over it.
    const { ex, token } = await awaitingGate();
    const envelope = jsonBytes({ decision: 'approve', output: { text: '' } });
    const answer = { decision: 'approve', output: { text: 'x'.repeat(AWS_LIMITS.statePayloadBytes - envelope - 20) } };
    expect(jsonBytes(answer)).toBe(AWS_LIMITS.statePayloadBytes - 20);

    await ex.sendTaskSuccess(token, answer);
    await ex.idle();

    expect(infoOf(ex, NAME)).toMatchObject({ status: 'FAILED', error: { error: 'States.DataLimitExceeded' } });
    expect(infoOf(ex, NAME)?.error?.cause).toContain("'AwaitDecision' has an output");
  });

  it('lets a result under the limit through: the step completes', async () => {
    const ex = boot(() => ({ action: 'done', attempt: 1, note: ofBytes(200_000) }));
    await ex.start('step', NAME, stepExecutionInput(STEP));
    await ex.idle();
    expect(infoOf(ex, NAME)?.status).toBe('SUCCEEDED');
  });

  it('reports a Lambda response over 6 MB as Function.ResponseSizeTooLarge, which the Catch routes like any function error', async () => {
    const ex = boot(() => ({ action: 'done', attempt: 1, note: ofBytes(AWS_LIMITS.lambdaResponseBytes + 1) }));
    await ex.start('step', NAME, stepExecutionInput(STEP));
    await ex.idle();

    expect(actions()).toEqual(['StepExecutor', 'recordFailure']);
    const failure = calls.find((c) => c.action === 'recordFailure') as { error: { message: string; details: unknown } };
    expect(failure.error.message).toBe('Function.ResponseSizeTooLarge');
    expect(JSON.stringify(failure.error.details)).toContain('exceeded maximum allowed payload size (6291556 bytes)');
  });

  it('never names States.DataLimitExceeded or States.Runtime in a Retry or Catch (so treating them as terminal is exact)', () => {
    for (const definition of [machines.run, machines.step]) {
      for (const state of Object.values(definition.States)) {
        const handlers = [...((state.Retry as unknown[]) ?? []), ...((state.Catch as unknown[]) ?? [])];
        const names = handlers.flatMap((h) => (h as { ErrorEquals: string[] }).ErrorEquals);
        expect(names).not.toContain('States.DataLimitExceeded');
        expect(names).not.toContain('States.Runtime');
      }
    }
  });
});

describe('task token limits', () => {
  it('refuses a SendTaskSuccess output over 256 KB with a ValidationException and leaves the token open', async () => {
    const { ex, token } = await awaitingGate();

    const error = await rejection(ex.sendTaskSuccess(token, { text: ofBytes(AWS_LIMITS.statePayloadBytes) }));
    expect(error).toMatchObject({ name: 'ValidationException' });
    expect(error?.message).toContain("Value at 'output'");

    await ex.sendTaskSuccess(token, { decision: 'approve' });
    await ex.idle();
    expect(infoOf(ex, NAME)?.status).toBe('SUCCEEDED');
  });

  it('refuses a SendTaskFailure cause over 32,768 characters with a ValidationException', async () => {
    const ex = boot(
      () => ({ action: 'await', kind: 'gate', timeoutSeconds: 60 }),
      () => ({ approvalId: 'a1' }),
    );
    await ex.start('step', NAME, stepExecutionInput(STEP));
    await ex.idle();
    const token = String(calls.find((c) => c.action === 'requestApproval')?.taskToken);
    await expect(rejection(ex.sendTaskFailure(token, 'E', 'c'.repeat(32_769)))).resolves.toMatchObject({
      name: 'ValidationException',
    });
    await expect(ex.sendTaskFailure(token, 'E', 'c'.repeat(32_768))).resolves.toBeUndefined();
  });
});

describe('Lambda concurrency (optional)', () => {
  it("throttles a Task beyond a function's concurrency; the machine retries it without recording a failure", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ex = boot(
      async (p) => {
        if (p.stepId === 'first') await held;
        return { action: 'done', attempt: 1 };
      },
      () => ({}),
      { StepExecutor: 1 },
    );
    const first = stepExecutionName('r1', 'first', 1);
    const second = stepExecutionName('r1', 'second', 1);
    await ex.start('step', first, stepExecutionInput({ runId: 'r1', stepId: 'first', generation: 1 }));
    await ex.start('step', second, stepExecutionInput({ runId: 'r1', stepId: 'second', generation: 1 }));
    for (let i = 0; i < 400 && (ex.throttles().StepExecutor ?? 0) === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(ex.throttles().StepExecutor).toBeGreaterThanOrEqual(1);
    expect(infoOf(ex, second)?.status).toBe('RUNNING');

    release();
    await ex.idle();
    expect(infoOf(ex, first)?.status).toBe('SUCCEEDED');
    expect(infoOf(ex, second)?.status).toBe('SUCCEEDED');
    // A throttled invocation never reached the function, and nothing counted it as a failure.
    expect(actions()).toEqual(['StepExecutor', 'StepExecutor']);
  }, 60_000);
});

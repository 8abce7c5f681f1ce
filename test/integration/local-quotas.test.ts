/**
 * The account quotas of the embedded runtime (infra/local/quotas), forced low, meet cairn's code with AWS's error
 * names and shapes: a Task beyond the account's Lambda concurrency is `Lambda.TooManyRequestsException` (retried by
 * the REAL synthesized step machine, then waited out: never a failed attempt), a hot DynamoDB partition is the SDK's
 * own `ThrottlingException` with its throttling reason after the SDK's retries, and a stack started with a low
 * StartExecution rate and Lambda concurrency completes a wide layer with no step failed.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessDynamo } from '../../infra/local/dynalite-in-process.ts';
import { createLocalExecutions, type LocalExecutions, type LocalHandler } from '../../infra/local/local-executions.ts';
import { createConcurrencyGate } from '../../infra/local/quotas/concurrency-gate.ts';
import { stackQuotas } from '../../infra/local/quotas/stack-quotas.ts';
import { type ExtractedMachines, synthesizeStateMachines } from '../../infra/local/synth.ts';
import { isTransientPlatformError } from '../../shared/errors.ts';
import { stepExecutionInput, stepExecutionName } from '../../shared/ports/executions.ts';
import { plan, step, useTestStack, waitForRun } from '../support/local-stack.ts';

type Payload = Record<string, unknown>;

let machines: ExtractedMachines;
let executions: LocalExecutions | undefined;
beforeAll(() => {
  machines = synthesizeStateMachines();
}, 120_000);
afterEach(() => {
  executions?.close();
  executions = undefined;
});

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen in time`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("the account's Lambda concurrency, forced to 1", () => {
  it('throttles a second Task with Lambda.TooManyRequestsException, which the step machine waits out without failing the step', async () => {
    const gate = createConcurrencyGate(1);
    let throttles = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const recorded: Payload[] = [];
    const ran: string[] = [];
    const handler =
      (script: (payload: Payload) => unknown): LocalHandler =>
      async (payload) =>
        script(payload as Payload);
    executions = createLocalExecutions({
      definitions: { run: machines.run, step: machines.step },
      functionOf: machines.functionOf,
      backoffMs: 1,
      retryIntervalMs: 1,
      onError: () => {},
      accountConcurrency: {
        gate,
        onThrottle: () => {
          throttles += 1;
          // The first step holds the only place until the second step's RunStep has spent its retries (7 tries)
          // three times over: twice it waits for capacity and comes back.
          if (throttles === 21) release();
        },
      },
      handlers: {
        Planner: handler(() => ({})),
        Validator: handler(() => ({ valid: true, errors: [] })),
        StepExecutor: handler(async (p) => {
          if (p.stepId === 'first') await held;
          ran.push(String(p.stepId));
          return { action: 'done', attempt: 1 };
        }),
        Coordinator: handler((p) => {
          if (p.action === 'recordFailure') recorded.push(p);
          return { action: 'done', attempt: 1 };
        }),
      },
    });
    const first = { runId: 'r1', stepId: 'first', generation: 1 };
    const second = { runId: 'r1', stepId: 'second', generation: 1 };
    await executions.start('step', stepExecutionName('r1', 'first', 1), stepExecutionInput(first));
    await until(() => gate.inUse() === 1, 'the first RunStep holding the place');
    await executions.start('step', stepExecutionName('r1', 'second', 1), stepExecutionInput(second));
    await until(() => ran.includes('second'), 'the second step running once the place is free');

    expect(throttles).toBeGreaterThanOrEqual(21);
    expect(ran).toEqual(['first', 'second']);
    // No failure was recorded for it: the throttle spent no attempt of the step.
    expect(recorded).toEqual([]);
    const name = stepExecutionName('r1', 'second', 1);
    await until(() => executions?.list().find((e) => e.name === name)?.status === 'SUCCEEDED', 'its end');
  }, 60_000);
});

describe("a DynamoDB partition's write throughput, forced to 1 unit a second", () => {
  it("makes the SDK throw DynamoDB's ThrottlingException with its reason, after the SDK's own retries", async () => {
    const quotas = stackQuotas({ tableName: 'quota-table', overrides: { partitionWriteUnitsPerSecond: 1 } });
    const dynamo = await startInProcessDynamo({ tableName: 'quota-table', aroundCalls: quotas.dynamo });
    try {
      // 100 KB: 100 write units, a hundred seconds of this partition's throughput.
      const item = { PK: { S: 'RUN#hot' }, SK: { S: 'RUN' }, big: { S: 'x'.repeat(100 * 1024) } };
      await dynamo.client.send(new PutItemCommand({ TableName: 'quota-table', Item: item }));
      const error = await dynamo.client
        .send(new PutItemCommand({ TableName: 'quota-table', Item: { ...item, SK: { S: 'OTHER' } } }))
        .then(
          () => undefined,
          (failure: unknown) => failure,
        );
      expect(error).toMatchObject({
        name: 'ThrottlingException',
        $fault: 'client',
        $metadata: { httpStatusCode: 400, attempts: 3 },
        throttlingReasons: [
          {
            reason: 'TableWriteKeyRangeThroughputExceeded',
            resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/quota-table',
          },
        ],
      });
      expect(isTransientPlatformError(error)).toBe(true);
      expect(quotas.counter.counts()).toEqual({ 'dynamodb.write': 3 });
      // Another partition is not held back by the hot one.
      await dynamo.client.send(
        new PutItemCommand({ TableName: 'quota-table', Item: { ...item, PK: { S: 'RUN#cold' } } }),
      );
    } finally {
      await dynamo.stop();
    }
  }, 30_000);
});

describe('a stack started with a StartExecution rate of 5 a second and a Lambda concurrency of 2', () => {
  // The Tasks' Retry does not pause, so a throttled RunStep outlasts it at once and waits for capacity (5 ms here).
  const stack = useTestStack({
    awsQuotas: { sfnStartRate: 5, lambdaConcurrency: 2 },
    retryIntervalMs: 1,
    limits: { maxReplans: 0 },
  });

  it('completes a layer wider than its start pace and its Lambdas with no step failed', async () => {
    expect(stack.quotas).toMatchObject({ sfnStartBucket: 22, sfnStartRefillPerSecond: 5, lambdaConcurrency: 2 });
    // The decider paces 4 starts a second after a burst of 11: most of the 30 starts are deferred by the run's decider.
    const layer = Array.from({ length: 30 }, (_, i) =>
      step(stack, `s${i}`, 'tool:conformance.echo', { input: { value: i }, dependsOn: ['root'] }),
    );
    const root = step(stack, 'root', 'tool:conformance.echo', { input: { value: -1 } });
    const runId = await stack.startRun({ plan: plan('a wide layer under quotas', [root, ...layer]) });
    const run = await waitForRun(stack, runId, undefined, 90_000);

    expect(run.status).toBe('complete');
    expect(run.steps.filter((s) => s.status !== 'succeeded').map((s) => `${s.id}=${s.status}`)).toEqual([]);
    expect(run.steps.every((s) => s.attempts === 1)).toBe(true);
    expect(stack.stats().throttles['lambda.concurrency']).toBeGreaterThan(0);
    expect(stack.stats().throttles['sfn.start.deferred']).toBeGreaterThan(0);
  }, 120_000);
});

/**
 * CDK assertions on the two synthesized machines' shape: Standard, JSONPath only, every Task bounded in time, the
 * Retry and Catch routes of the execution design, and the Lambda each Task calls. What every Task retries and
 * catches is in task-errors.test.ts, the Lambdas' configuration and the table in stack-resources.test.ts, the
 * security properties (authorizers, IAM, logging, dead letters) in security.test.ts.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import '../../infra/local/polyfills.ts';
import { runStepPayloadSchema } from '../../functions/step-executor.ts';
import {
  CAPACITY_ERRORS,
  CAPACITY_WAIT_SECONDS,
  LAMBDA_SERVICE_ERRORS,
  LAMBDA_THROTTLE,
  PLATFORM_ERRORS,
  RECORD_AGAIN_SECONDS,
  TRANSIENT_ERRORS,
} from '../../infra/constructs/state-machines.ts';
import { CAPACITY_TASKS, capacityStates, RUN_STATES, STEP_STATES } from '../../infra/constructs/state-names.ts';
import { type AslDefinition, type AslState, extractStateMachines } from '../../infra/local/synth.ts';
import { sentBrief } from '../../shared/engine/run/step-brief.ts';
import { stepExecutionInput } from '../../shared/ports/executions.ts';
import {
  type Catcher,
  catchOf,
  isCallback,
  type Retrier,
  state,
  successors,
  synthMachines,
  tasks,
} from './synthesized-machines.ts';

let template: Template;
let run: AslDefinition;
let step: AslDefinition;

beforeAll(() => {
  ({ template, run, step } = synthMachines());
});

/** A brief as the decider sends one (shared/engine/run/step-brief.ts). */
const BRIEF = {
  revision: 1,
  step: { id: 's-1', title: 'S', target: 'tool:t', dependsOn: [] },
  upstream: [],
  outputs: [],
};

describe('state machines', () => {
  it('are both Standard machines named after the stage', () => {
    template.resourceCountIs('AWS::StepFunctions::StateMachine', 2);
    for (const suffix of ['run', 'step']) {
      template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
        StateMachineName: `cairn-test-${suffix}`,
        StateMachineType: 'STANDARD',
      });
    }
  });

  it('use exactly the state names of state-names.ts, all reachable, with no dangling transition', () => {
    for (const [definition, names] of [
      [run, RUN_STATES],
      [step, STEP_STATES],
    ] as const) {
      const own = new Set<string>(Object.values(names));
      const capacity = CAPACITY_TASKS.filter((task) => own.has(task)).flatMap((task) =>
        Object.values(capacityStates(task)),
      );
      expect(Object.keys(definition.States).sort()).toEqual([...own, ...capacity].sort());
      const seen = new Set<string>([definition.StartAt]);
      const queue = [definition.StartAt];
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        for (const next of successors(state(definition, name))) {
          expect(definition.States[next], `${name} → ${next}`).toBeDefined();
          if (!seen.has(next)) queue.push(next) && seen.add(next);
        }
      }
      expect([...seen].sort()).toEqual(Object.keys(definition.States).sort());
    }
  });

  it('are JSONPath only: no JSONata, no Assign, no Arguments/Output fields', () => {
    for (const definition of [run, step]) {
      expect(definition.QueryLanguage ?? 'JSONPath').toBe('JSONPath');
      for (const s of Object.values(definition.States)) {
        expect(s.QueryLanguage ?? 'JSONPath').toBe('JSONPath');
        expect(s).not.toHaveProperty('Assign');
        expect(s).not.toHaveProperty('Arguments');
        expect(s).not.toHaveProperty('Output');
      }
    }
  });

  it('bound every callback task with a timeout and every Lambda task with TimeoutSeconds', () => {
    const all = [...tasks(run), ...tasks(step)];
    const callbacks = all.filter(([, s]) => isCallback(s)).map(([name]) => name);
    expect(callbacks.sort()).toEqual(['AwaitDecision', 'AwaitRunFinished']);
    for (const [name, s] of all) {
      if (isCallback(s)) {
        expect(typeof s.TimeoutSeconds === 'number' || typeof s.TimeoutSecondsPath === 'string', name).toBe(true);
      } else {
        expect(s.TimeoutSeconds, name).toEqual(expect.any(Number));
      }
    }
    expect(state(run, 'AwaitRunFinished').TimeoutSecondsPath).toBe('$.started.deadlineSeconds');
    // RunStep's `await` answer says how long the person may take.
    expect(state(step, 'AwaitDecision').TimeoutSecondsPath).toBe('$.next.timeoutSeconds');
  });

  it('give every callback task a timeout path to a Catch', () => {
    expect(catchOf(state(run, 'AwaitRunFinished'), 'States.Timeout')?.Next).toBe('FinalizeRun');
    expect(catchOf(state(run, 'AwaitRunFinished'), 'States.ALL')?.Next).toBe('FinalizeRun');
    // No decision in time: the approval expires (expireApproval), and the execution ends there.
    const awaitDecision = state(step, 'AwaitDecision');
    expect(awaitDecision.Catch as Catcher[]).toEqual([
      { ErrorEquals: [...CAPACITY_ERRORS], ResultPath: '$.platformError', Next: 'AwaitDecisionCapacityDraw' },
      { ErrorEquals: ['States.Timeout'], ResultPath: '$.expired', Next: 'DecisionExpired' },
      { ErrorEquals: ['States.ALL'], ResultPath: '$.gateError', Next: 'GateFailed' },
    ]);
    expect(state(step, 'DecisionExpired')).toMatchObject({
      Type: 'Task',
      Parameters: { action: 'expireApproval', 'kind.$': '$.next.kind' },
      Next: 'StepDone',
    });
    // A wait that failed otherwise (SendTaskFailure) is a permanent E_GATE failure of the attempt it waited for.
    expect(state(step, 'GateFailed')).toMatchObject({
      Type: 'Pass',
      ResultPath: '$.failure',
      Parameters: { error: { code: 'E_GATE', retryable: false }, 'attempt.$': '$.next.attempt' },
      Next: 'RecordFailure',
    });
  });

  it('send callback tasks the task token and only ids', () => {
    const parameters = state(run, 'AwaitRunFinished').Parameters as { Payload: Record<string, unknown> };
    // The execution's name says which opening of the run waits (an outlived execution of a reopened run is told apart).
    expect(parameters.Payload).toEqual({
      action: 'awaitRun',
      'runId.$': '$.runId',
      'execution.$': '$$.Execution.Name',
      'taskToken.$': '$$.Task.Token',
    });
  });

  it('start the run machine with ResumeOrPlan: a resumed run goes straight to the wait, any other input plans', () => {
    expect(run.StartAt).toBe(RUN_STATES.resumeOrPlan);
    expect(state(run, 'ResumeOrPlan')).toEqual({
      Type: 'Choice',
      Choices: [
        {
          And: [
            { Variable: '$.resume', IsPresent: true },
            { Variable: '$.resume', BooleanEquals: true },
          ],
          Next: 'PrepareAwait',
        },
      ],
      Default: 'PlanRun',
    });
    expect(state(run, 'PrepareAwait').Next).toBe('AwaitRunFinished');
  });

  it('tell FinalizeRun which execution speaks, so an outlived execution of a reopened run changes nothing', () => {
    expect(state(run, 'FinalizeRun').Parameters).toMatchObject({
      action: 'finalizeRun',
      'runId.$': '$.runId',
      'execution.$': '$$.Execution.Name',
    });
  });

  it('route planner, validator and start failures to FailRun with the error at $.error', () => {
    for (const name of ['PlanRun', 'ValidatePlan', 'StartRun']) {
      expect(catchOf(state(run, name), 'States.ALL'), name).toEqual({
        ErrorEquals: ['States.ALL'],
        ResultPath: '$.error',
        Next: 'FailRun',
      });
    }
    expect(state(run, 'IsPlanValid').Choices).toEqual([
      { Variable: '$.validation.valid', BooleanEquals: false, Next: 'RejectPlan' },
    ]);
  });

  it('send a Task the platform outlasted to a jittered wait for capacity and back, before any other Catch', async () => {
    for (const [definition, task] of [
      [run, 'PlanRun'],
      [run, 'ValidatePlan'],
      [run, 'RejectPlan'],
      [run, 'StartRun'],
      [run, 'AwaitRunFinished'],
      [step, 'RunStep'],
      [step, 'AwaitDecision'],
    ] as const) {
      const { draw, wait } = capacityStates(task);
      expect((state(definition, task).Catch as Catcher[])[0], task).toEqual({
        ErrorEquals: [...CAPACITY_ERRORS],
        ResultPath: '$.platformError',
        Next: draw,
      });
      expect(state(definition, wait), task).toEqual({ Type: 'Wait', SecondsPath: '$.capacity.seconds', Next: task });
    }
    // A crash (Lambda.Unknown) may be the work itself: it is no capacity error, and RunStep's counts as an attempt.
    expect(CAPACITY_ERRORS).not.toContain('Lambda.Unknown');
    expect(CAPACITY_ERRORS).toEqual(
      expect.arrayContaining([LAMBDA_THROTTLE, 'Sandbox.Timedout', 'ThrottlingException']),
    );
    // The draw, run as written: a whole number of seconds in the range, the rest of the input kept.
    const { draw, wait } = capacityStates('RunStep');
    const machine = new StateMachine({
      StartAt: draw,
      States: { [draw]: { ...state(step, draw), Next: 'Done' }, Done: { Type: 'Succeed' } },
    } as unknown as StateMachineDefinition);
    const input = { ...stepExecutionInput({ runId: 'r', stepId: 's', generation: 1 }), platformError: { Error: 'x' } };
    const output = (await machine.run(input).result) as typeof input & { capacity: { seconds: number } };
    expect(output).toMatchObject(input);
    expect(Number.isInteger(output.capacity.seconds)).toBe(true);
    expect(output.capacity.seconds).toBeGreaterThanOrEqual(CAPACITY_WAIT_SECONDS.min);
    expect(output.capacity.seconds).toBeLessThanOrEqual(CAPACITY_WAIT_SECONDS.max);
    expect(state(step, wait).Next).toBe('RunStep');
  });

  it('run a step on the happy path as RunStep → Route → StepDone, one Lambda invocation', () => {
    expect(step.StartAt).toBe('RunStep');
    expect(state(step, 'RunStep')).toMatchObject({ Type: 'Task', ResultPath: '$.next', Next: 'Route' });
    expect(state(step, 'Route')).toEqual({
      Type: 'Choice',
      Choices: [
        { Variable: '$.next.action', StringEquals: 'retry', Next: 'Backoff' },
        { Variable: '$.next.action', StringEquals: 'await', Next: 'AwaitDecision' },
      ],
      Default: 'StepDone',
    });
    expect(state(step, 'StepDone').Type).toBe('Succeed');
  });

  it('give RunStep the execution, its last answer, a person’s decision and its brief, all present in a step execution’s input', () => {
    const parameters = state(step, 'RunStep').Parameters as Record<string, unknown>;
    expect(parameters).toEqual({
      'runId.$': '$.runId',
      'stepId.$': '$.stepId',
      'generation.$': '$.generation',
      'executionId.$': '$$.Execution.Id',
      'previous.$': '$.next',
      'decision.$': '$.decision',
      'started.$': `States.JsonMerge($$.Execution.Input, States.StringToJson('{"next":null,"decision":null}'), false)`,
    });
    // JSONPath fails on a path that does not exist: the input the coordinator starts a step with has them all.
    const input = stepExecutionInput({ runId: 'r', stepId: 's', generation: 1 });
    for (const path of Object.values(parameters).filter((p) => typeof p === 'string' && p.startsWith('$.')))
      expect(input, String(path)).toHaveProperty(String(path).slice(2).split('.')[0] as string);
  });

  it('give RunStep, RecordFailure and AwaitDecision a payload even when an older decider started the step without a brief', async () => {
    const { brief: _none, ...older } = stepExecutionInput({ runId: 'r-1', stepId: 's-1', generation: 1 });
    const briefed = stepExecutionInput({ runId: 'r-1', stepId: 's-1', generation: 1 }, BRIEF);
    const payloadOf = async (name: string, input: object) => {
      const machine = new StateMachine({
        StartAt: 'Task',
        States: { Task: { Type: 'Pass', Parameters: state(step, name).Parameters, End: true } },
      } as unknown as StateMachineDefinition);
      return machine.run(input as never, {
        context: { Execution: { Id: 'x', Name: 'r-1-s-1-g1' }, Task: { Token: 't' } },
      }).result;
    };
    const withNext = { next: { action: 'await', attempt: 1, kind: 'approval', timeoutSeconds: 60 } };
    for (const [name, extra] of [
      ['RunStep', {}],
      ['AwaitDecision', withNext],
      ['RecordFailure', { ...withNext, failure: { attempt: 1, error: { code: 'E', message: 'm', retryable: true } } }],
    ] as const) {
      // A Lambda callback Task sends its Parameters' `Payload`.
      const lambdaPayload = async (input: object) => {
        const result = (await payloadOf(name, input)) as Record<string, unknown>;
        return (name === 'AwaitDecision' ? result.Payload : result) as Record<string, unknown>;
      };
      const payload = await lambdaPayload({ ...older, ...extra });
      expect(payload, name).toMatchObject({ runId: 'r-1', stepId: 's-1', generation: 1 });
      expect(sentBrief(payload), name).toBeNull();
      expect(sentBrief(await lambdaPayload({ ...briefed, ...extra })), name).toEqual(BRIEF);
    }
    const runStep = runStepPayloadSchema.parse(await payloadOf('RunStep', older));
    expect(sentBrief(runStep)).toBeNull();
  });

  it('retry RunStep on Lambda service errors and throttles, with the same payload, so no attempt is counted', () => {
    const runStep = state(step, 'RunStep');
    expect(runStep.Retry as Retrier[]).toEqual([
      expect.objectContaining({
        ErrorEquals: [...PLATFORM_ERRORS],
        IntervalSeconds: 1,
        MaxAttempts: 6,
        BackoffRate: 2,
      }),
    ]);
    for (const error of ['Lambda.TooManyRequestsException', 'Lambda.ServiceException', 'ThrottlingException'])
      expect((runStep.Retry as Retrier[])[0]?.ErrorEquals, error).toContain(error);
    // A retry of the Task re-sends the same Parameters ($.next is only replaced by an answer): a new attempt only
    // ever comes from RunStep's own `retry` answer, through the Backoff wait.
    expect(state(step, 'Backoff')).toEqual({ Type: 'Wait', SecondsPath: '$.next.delaySeconds', Next: 'RunStep' });
  });

  it('catch a RunStep that failed for good into RecordFailure, as a retryable E_EXECUTOR failure', async () => {
    expect(catchOf(state(step, 'RunStep'), 'States.ALL')).toEqual({
      ErrorEquals: ['States.ALL'],
      ResultPath: '$.executorError',
      Next: 'ExecutorFailed',
    });
    // The attempt is unknown here (RecordFailure takes the step's newest): a JSON null that survives synthesis, where
    // a plain null would be dropped by CDK and `$.failure.attempt` would fail the execution with States.Runtime.
    expect(state(step, 'ExecutorFailed')).toEqual({
      Type: 'Pass',
      ResultPath: '$.failure',
      Parameters: {
        error: {
          code: 'E_EXECUTOR',
          retryable: true,
          'message.$': '$.executorError.Error',
          'details.$': '$.executorError',
        },
        'attempt.$': "States.StringToJson('null')",
      },
      Next: 'RecordFailure',
    });
    const recordFailure = state(step, 'RecordFailure');
    expect(recordFailure).toMatchObject({
      Type: 'Task',
      Parameters: {
        action: 'recordFailure',
        'runId.$': '$.runId',
        'stepId.$': '$.stepId',
        'generation.$': '$.generation',
        'attempt.$': '$.failure.attempt',
        'error.$': '$.failure.error',
        'previous.$': '$.next',
      },
      ResultPath: '$.next',
      Next: 'Route',
    });

    // What RecordFailure's Lambda receives, by the synthesized states run as written: ExecutorFailed, then
    // RecordFailure's Parameters (a Pass here, so the payload is the output).
    const { Parameters } = recordFailure;
    const machine = new StateMachine({
      StartAt: 'ExecutorFailed',
      States: {
        ExecutorFailed: state(step, 'ExecutorFailed'),
        RecordFailure: { Type: 'Pass', Parameters, Next: 'Done' },
        Done: { Type: 'Succeed' },
      },
    } as unknown as StateMachineDefinition);
    const executorError = { Error: 'TypeError', Cause: 'cannot read properties of undefined' };
    const input = { ...stepExecutionInput({ runId: 'r-1', stepId: 's-1', generation: 2 }), executorError };
    const execution = 'r-1-s-1-g2';
    const payload = await machine.run(input, { context: { Execution: { Name: execution } } }).result;
    expect(payload).toEqual({
      action: 'recordFailure',
      runId: 'r-1',
      stepId: 's-1',
      generation: 2,
      execution,
      attempt: null,
      // RunStep's entry: its first here (the execution's input says `next: null`).
      previous: null,
      // The execution's input, where its brief rides (none here), without its decision and last answer.
      started: { ...input, next: null, decision: null },
      error: { code: 'E_EXECUTOR', retryable: true, message: 'TypeError', details: executorError },
    });

    // The platform's errors (Lambda's throttle included, which CDK's default list leaves out) are retried with the
    // same payload (recordFailure answers a repeat idempotently), then tried again after a while; anything else ends
    // the execution failed.
    expect(recordFailure.Retry as Retrier[]).toEqual([
      {
        ErrorEquals: [...PLATFORM_ERRORS],
        IntervalSeconds: 1,
        MaxAttempts: 6,
        BackoffRate: 2,
        MaxDelaySeconds: 30,
        JitterStrategy: 'FULL',
      },
    ]);
    for (const error of [...LAMBDA_SERVICE_ERRORS, LAMBDA_THROTTLE, ...TRANSIENT_ERRORS])
      expect((recordFailure.Retry as Retrier[])[0]?.ErrorEquals, error).toContain(error);
    expect(recordFailure.Catch as Catcher[]).toEqual([
      { ErrorEquals: [...PLATFORM_ERRORS], ResultPath: '$.platformError', Next: 'RecordFailureAgain' },
      { ErrorEquals: ['States.ALL'], ResultPath: '$.lostError', Next: 'StepNotRecorded' },
    ]);
    expect(state(step, 'RecordFailureAgain')).toEqual({
      Type: 'Wait',
      Seconds: RECORD_AGAIN_SECONDS,
      Next: 'RecordFailure',
    });
  });

  it('fill in every $.failure field RecordFailure reads on each way into it', () => {
    const reads = Object.values(state(step, 'RecordFailure').Parameters as Record<string, unknown>)
      .filter((path): path is string => typeof path === 'string' && path.startsWith('$.failure.'))
      .map((path) => path.slice('$.failure.'.length));
    expect(reads.sort()).toEqual(['attempt', 'error']);
    // RecordFailureAgain (a Wait after RecordFailure's own Catch, which writes elsewhere) keeps the $.failure it read.
    const ways = Object.entries(step.States).filter(([, s]) => s.Next === 'RecordFailure' && s.Type !== 'Wait');
    expect(ways.map(([name]) => name).sort()).toEqual(['ExecutorFailed', 'GateFailed']);
    for (const [name, s] of ways) {
      expect(s.ResultPath, name).toBe('$.failure');
      // A field set to null in CDK is left out of the synthesized Parameters: the path would then fail at run time.
      const written = Object.keys(s.Parameters as Record<string, unknown>).map((key) => key.replace(/\.\$$/, ''));
      for (const field of reads) expect(written, `${name} sets failure.${field}`).toContain(field);
    }
  });
});

describe('extractStateMachines', () => {
  it('maps every Lambda a Task calls to its function key', () => {
    const template2 = template.toJSON() as Parameters<typeof extractStateMachines>[0];
    const { functionOf } = extractStateMachines(template2);
    const functionOfTask = (s: AslState): string | undefined => {
      const name = (s.Parameters as { FunctionName?: string } | undefined)?.FunctionName;
      return functionOf(
        isCallback(s) || String(s.Resource).endsWith(':lambda:invoke') ? String(name) : String(s.Resource),
      );
    };

    expect(functionOfTask(state(run, 'PlanRun'))).toBe('Planner');
    expect(functionOfTask(state(run, 'ValidatePlan'))).toBe('Validator');
    expect(functionOfTask(state(run, 'AwaitRunFinished'))).toBe('Coordinator');
    expect(functionOfTask(state(step, 'RunStep'))).toBe('StepExecutor');
    expect(functionOfTask(state(step, 'RecordFailure'))).toBe('Coordinator');
    expect(functionOfTask(state(step, 'AwaitDecision'))).toBe('Coordinator');
    expect(functionOf('arn:aws:lambda:us-east-1:123456789012:function:SomethingElse')).toBeUndefined();
  });
});

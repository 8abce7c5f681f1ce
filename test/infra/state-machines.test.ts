/**
 * CDK assertions on the synthesized stack: the two machines' shape (Standard, JSONPath only, every Task bounded in
 * time, the Retry and Catch routes of the execution design), the Lambdas' runtime and configuration, and the table.
 * The security properties (authorizers, IAM, logging, dead letters) are in security.test.ts.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import '../../infra/local/polyfills.ts';
import { asTransient, TRANSIENT_ERROR_NAME } from '../../functions/root.ts';
import {
  LAMBDA_SERVICE_ERRORS,
  LAMBDA_THROTTLE,
  LAMBDA_TIMEOUT,
  PLATFORM_ERRORS,
  RECORD_AGAIN_SECONDS,
  TRANSIENT_ERRORS,
} from '../../infra/constructs/state-machines.ts';
import { FUNCTION_KEYS, RUN_STATES, STEP_STATES } from '../../infra/constructs/state-names.ts';
import { type AslDefinition, type AslState, extractStateMachines } from '../../infra/local/synth.ts';
import { CairnStack, configFromContext } from '../../infra/stack.ts';
import { ConflictError, ValidationError } from '../../shared/errors.ts';
import { stepExecutionInput } from '../../shared/ports/executions.ts';

let template: Template;
let run: AslDefinition;
let step: AslDefinition;

const CONTEXT = {
  'aws:cdk:bundling-stacks': [],
  'aws:cdk:enable-path-metadata': true,
  stage: 'test',
  maxSteps: '12',
  runDeadlineSeconds: 600,
};

beforeAll(() => {
  const app = new App({ context: CONTEXT });
  const stack = new CairnStack(app, 'Cairn-test', { config: configFromContext(app.node) });
  template = Template.fromStack(stack);
  ({ run, step } = extractStateMachines(template.toJSON() as Parameters<typeof extractStateMachines>[0]));
});

type Catcher = { ErrorEquals: string[]; Next: string; ResultPath?: string };
type Retrier = { ErrorEquals: string[]; MaxAttempts?: number; BackoffRate?: number; IntervalSeconds?: number };

/** A Lambda's environment (resolved to text: ARNs built with Fn::Join become their joined strings with refs). */
const environmentOf = (key: string): Record<string, string> => {
  const { functionOf } = extractStateMachines(template.toJSON() as Parameters<typeof extractStateMachines>[0]);
  const [, fn] =
    Object.entries(template.findResources('AWS::Lambda::Function')).find(([id]) => functionOf(id) === key) ?? [];
  if (!fn) throw new Error(`no function ${key}`);
  const variables = (fn.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment.Variables;
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]),
  );
};

const state = (definition: AslDefinition, name: string): AslState => {
  const found = definition.States[name];
  if (!found) throw new Error(`no state ${name}`);
  return found;
};
const tasks = (definition: AslDefinition): [string, AslState][] =>
  Object.entries(definition.States).filter(([, s]) => s.Type === 'Task');
const isCallback = (s: AslState): boolean => String(s.Resource).endsWith('.waitForTaskToken');
const catchOf = (s: AslState, error: string): Catcher | undefined =>
  (s.Catch as Catcher[] | undefined)?.find((c) => c.ErrorEquals.includes(error));
const successors = (s: AslState): string[] => [
  ...(typeof s.Next === 'string' ? [s.Next] : []),
  ...(typeof s.Default === 'string' ? [s.Default] : []),
  ...((s.Choices as { Next: string }[] | undefined) ?? []).map((c) => c.Next),
  ...((s.Catch as Catcher[] | undefined) ?? []).map((c) => c.Next),
];

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
      expect(Object.keys(definition.States).sort()).toEqual(Object.values(names).sort());
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
    expect(parameters.Payload).toEqual({ action: 'awaitRun', 'runId.$': '$.runId', 'taskToken.$': '$$.Task.Token' });
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

  it('give RunStep the execution, its last answer and a person’s decision, all present in a step execution’s input', () => {
    const parameters = state(step, 'RunStep').Parameters as Record<string, unknown>;
    expect(parameters).toEqual({
      'runId.$': '$.runId',
      'stepId.$': '$.stepId',
      'generation.$': '$.generation',
      'executionId.$': '$$.Execution.Id',
      'previous.$': '$.next',
      'decision.$': '$.decision',
    });
    // JSONPath fails on a path that does not exist: the input the coordinator starts a step with has them all.
    const input = stepExecutionInput({ runId: 'r', stepId: 's', generation: 1 });
    for (const path of Object.values(parameters).filter((p) => typeof p === 'string' && p.startsWith('$.')))
      expect(input, String(path)).toHaveProperty(String(path).slice(2).split('.')[0] as string);
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
    const payload = await machine.run(input).result;
    expect(payload).toEqual({
      action: 'recordFailure',
      runId: 'r-1',
      stepId: 's-1',
      generation: 2,
      attempt: null,
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
        // The platform's errors that outlast Retry on a Task that is the record: a wait, then the same Task again.
        const platform = catchOf(s, LAMBDA_THROTTLE);
        if (platform) {
          const again = state(definition, platform.Next);
          expect(again, name).toMatchObject({ Type: 'Wait', Next: name });
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

describe('functions', () => {
  it('run on arm64 with a current Node.js runtime (22 or newer)', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(functions).toHaveLength(FUNCTION_KEYS.length);
    for (const fn of functions) {
      const { Runtime, Architectures } = fn.Properties as { Runtime: string; Architectures: string[] };
      expect(Runtime).not.toBe('nodejs20.x');
      expect(Number(/^nodejs(\d+)\.x$/.exec(Runtime)?.[1])).toBeGreaterThanOrEqual(22);
      expect(Architectures).toEqual(['arm64']);
    }
  });

  it('get the limits from context and the machine ARNs without a circular reference', () => {
    template.allResourcesProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ CAIRN_TABLE_NAME: Match.anyValue() }) },
    });
    for (const key of ['Coordinator', 'Api']) {
      expect(environmentOf(key)).toMatchObject({
        CAIRN_MAX_STEPS: '12',
        CAIRN_RUN_DEADLINE_SECONDS: '600',
        CAIRN_STEP_MACHINE_ARN: expect.stringContaining('stateMachine:cairn-test-step'),
      });
    }
    for (const key of ['Planner', 'Validator']) expect(environmentOf(key)).toMatchObject({ CAIRN_MAX_STEPS: '12' });
  });

  it('rejects a limit in context that is not a positive integer', () => {
    const app = new App({ context: { maxDepth: 'deep' } });
    expect(() => configFromContext(app.node)).toThrow(/maxDepth/);
  });
});

describe('table', () => {
  it('is on-demand with PK/SK, GSI1, point-in-time recovery and TTL on expiresAt', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'PK', KeyType: 'HASH' },
        { AttributeName: 'SK', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: 'GSI1',
          KeySchema: [
            { AttributeName: 'GSI1PK', KeyType: 'HASH' },
            { AttributeName: 'GSI1SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        }),
      ],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
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

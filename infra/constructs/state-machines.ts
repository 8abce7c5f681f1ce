/**
 * The run and step state machines (Standard, JSONPath only: the embedded interpreter runs neither JSONata nor
 * `Assign`). Only ids travel through Step Functions; everything else lives in the store. Every Lambda Task has a
 * timeout and every callback (waitForTaskToken) Task has a timeout path, so no wait is unbounded. Every Task retries
 * the platform's errors (PLATFORM_ERRORS) with the same payload, and has a Catch: to the state that records the
 * failure, or, for the Tasks that are that record, a long wait and another try (the platform's errors) or the
 * machine's one Fail state, which its failed-executions alarm reports. Both machines log
 * every event (without execution data: payloads are ids, the story is in the store) and trace with X-Ray.
 */
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  Choice,
  Condition,
  DefinitionBody,
  Errors,
  Fail,
  type IChainable,
  IntegrationPattern,
  JitterType,
  JsonPath,
  LogLevel,
  Pass,
  Result,
  type RetryProps,
  StateMachine,
  StateMachineType,
  Succeed,
  TaskInput,
  type TaskStateBase,
  Timeout,
  Wait,
  WaitTime,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { FUNCTION_TIMEOUT_SECONDS, type MachineRef } from './functions.ts';
import { capacityStates, type FunctionKey, MACHINE_IDS, RUN_STATES as R, STEP_STATES as S } from './state-names.ts';

/** Lambda service errors worth one more try of the step executor (its own errors go to RecordFailure instead). */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
] as const;

/** Lambda's throttle, which the default retrier of a LambdaInvoke Task (CDK's list) does not retry. */
export const LAMBDA_THROTTLE = 'Lambda.TooManyRequestsException';

/**
 * Errors of cairn's own that say "try again" (a throttled store call, a lost conditional race that the repeat
 * resolves): the Task is retried with the same payload, which every action answers idempotently.
 */
export const TRANSIENT_ERRORS = [
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TransientError',
] as const;

/** The function ran out of time: its effects may have happened, and every action answers a repeat idempotently. */
export const LAMBDA_TIMEOUT = 'Sandbox.Timedout';

/**
 * An error the function did not handle itself: its process ran out of memory or died on its way out (AWS: "Unhandled
 * errors in Lambda are reported as Lambda.Unknown ... These include out-of-memory errors and function timeouts").
 * Like a timeout, its effects may have happened, and every handler (coordinator, step executor, planner, validator)
 * answers a repeat idempotently; a crash that repeats runs out of Retry and takes the Task's Catch.
 */
export const LAMBDA_UNKNOWN = 'Lambda.Unknown';

/**
 * What says "the platform, not the work": Lambda's service errors and throttle, an invocation that timed out on
 * either side or whose function died (Lambda.Unknown), and cairn's own retryable errors. Every Task retries them with the same payload; for RunStep they are
 * never counted as attempts of the step.
 */
export const PLATFORM_ERRORS = [
  ...LAMBDA_SERVICE_ERRORS,
  'Lambda.ClientExecutionTimeoutException',
  LAMBDA_TIMEOUT,
  LAMBDA_UNKNOWN,
  ...TRANSIENT_ERRORS,
] as const;

/**
 * What says "no capacity now": the platform's errors less a function that died (Lambda.Unknown, which may be the work
 * itself: out of memory on its input). A Task that these outlast its Retry waits for capacity (`waitForCapacity`) and
 * is tried again, for as long as it takes: a throttle or a platform timeout never fails a step or a run. A run's
 * deadline stops its step executions; a step execution stopped so ends wherever it waited.
 */
export const CAPACITY_ERRORS = PLATFORM_ERRORS.filter((error) => error !== LAMBDA_UNKNOWN);

/** A wait for capacity lasts a random whole number of seconds in this range: the throttled come back spread. */
export const CAPACITY_WAIT_SECONDS = { min: 5, max: 90 } as const;

/** Six tries over about a minute, with full jitter so a throttled burst does not come back as one. */
const PLATFORM_RETRY: RetryProps = {
  errors: [...PLATFORM_ERRORS],
  interval: Duration.seconds(1),
  maxAttempts: 6,
  backoffRate: 2,
  maxDelay: Duration.seconds(30),
  jitterStrategy: JitterType.FULL,
};

/** How long a Task that records an ending waits before it tries again, once the platform's errors outlasted Retry. */
export const RECORD_AGAIN_SECONDS = 300;

/** A Task gets its Lambda's timeout plus this margin, so a Lambda timeout surfaces as the Lambda's own error. */
const TASK_TIMEOUT_MARGIN_SECONDS = 30;

/** Machine names are fixed up front: the functions need the ARNs in their environment before the machines exist. */
export function machineRefs(scope: Construct, stage: string): { run: MachineRef; step: MachineRef } {
  const stack = Stack.of(scope);
  const ref = (suffix: string): MachineRef => {
    const name = `cairn-${stage}-${suffix}`;
    const arn = stack.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: name,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    return { name, arn };
  };
  return { run: ref('run'), step: ref('step') };
}

export interface StateMachinesProps {
  readonly functions: Readonly<Record<FunctionKey, IFunction>>;
  readonly machines: { readonly run: MachineRef; readonly step: MachineRef };
  /** How long the execution logs are kept (default one month). */
  readonly logRetentionDays?: RetentionDays;
}

const runId = JsonPath.stringAt('$.runId');
/** Which execution a word comes from: a run's opening, the holder of a step's generation. */
const execution = JsonPath.stringAt('$$.Execution.Name');
/**
 * What the step needs of its plan, from the decider's start (none: it reads the plan): shared/engine/run/step-brief.ts.
 * Sent as the execution's input (its decision and last answer left out, which the Tasks are sent apart), not as
 * `$.brief`: an execution an older decider started has no `brief`, and a JSONPath to a missing field fails it with
 * States.Runtime, where the input itself always exists. No state of its own: a step's happy path stays 3
 * transitions.
 */
const started = JsonPath.jsonMerge(
  JsonPath.objectAt('$$.Execution.Input'),
  JsonPath.stringToJson(JSON.stringify({ next: null, decision: null })),
);
const stepIds = {
  runId,
  stepId: JsonPath.stringAt('$.stepId'),
  generation: JsonPath.numberAt('$.generation'),
};

export class StateMachines extends Construct {
  readonly run: StateMachine;
  readonly step: StateMachine;
  private readonly fns: Readonly<Record<FunctionKey, IFunction>>;

  constructor(scope: Construct, id: string, props: StateMachinesProps) {
    super(scope, id);
    this.fns = props.functions;
    const observed = (machine: MachineRef, logsId: string) => ({
      stateMachineName: machine.name,
      stateMachineType: StateMachineType.STANDARD,
      tracingEnabled: true,
      logs: {
        // The /aws/vendedlogs/ prefix keeps CloudWatch Logs' account-wide resource policy from growing per group.
        destination: new LogGroup(this, logsId, {
          logGroupName: `/aws/vendedlogs/states/${machine.name}`,
          retention: props.logRetentionDays ?? 30,
          removalPolicy: RemovalPolicy.DESTROY,
        }),
        level: LogLevel.ALL,
        includeExecutionData: false,
      },
    });
    this.run = new StateMachine(this, MACHINE_IDS.run, {
      ...observed(props.machines.run, `${MACHINE_IDS.run}Logs`),
      definitionBody: DefinitionBody.fromChainable(this.runDefinition()),
    });
    this.step = new StateMachine(this, MACHINE_IDS.step, {
      ...observed(props.machines.step, `${MACHINE_IDS.step}Logs`),
      definitionBody: DefinitionBody.fromChainable(this.stepDefinition()),
    });
  }

  /**
   * A synchronous Lambda call whose result is the function's return value (payloadResponseOnly), retrying the
   * platform's errors (one retrier, ours: CDK's default list leaves out the throttle).
   */
  private invoke(name: string, key: FunctionKey, payload: Record<string, unknown>, resultPath: string) {
    return new LambdaInvoke(this, name, {
      lambdaFunction: this.fns[key],
      payload: TaskInput.fromObject(payload),
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
      taskTimeout: Timeout.duration(Duration.seconds(FUNCTION_TIMEOUT_SECONDS[key] + TASK_TIMEOUT_MARGIN_SECONDS)),
      resultPath,
    }).addRetry(PLATFORM_RETRY);
  }

  /**
   * A Task that is itself the record of an ending (a failed attempt, an expired approval, a failed or finished run)
   * must not lose it: past its Retry, the platform's errors wait RECORD_AGAIN_SECONDS and try again (a step's
   * execution is stopped at the latest when its run ends); any other error ends the execution at `lost`.
   */
  private recordOrFail<T extends TaskStateBase>(task: T, againName: string, lost: Fail): T {
    const again = new Wait(this, againName, { time: WaitTime.duration(Duration.seconds(RECORD_AGAIN_SECONDS)) });
    again.next(task);
    task
      .addCatch(again, { errors: [...PLATFORM_ERRORS], resultPath: '$.platformError' })
      .addCatch(lost, { errors: [Errors.ALL], resultPath: '$.lostError' });
    return task;
  }

  /**
   * Past its Retry, the capacity errors (CAPACITY_ERRORS) send `task` to a jittered wait of minutes and then to itself
   * again, with its input as it was (the error is kept at `$.platformError`); any other error goes on to the Catches
   * added after this one. Step Functions keeps the wait (a Standard execution's Wait is durable), and no Lambda is
   * invoked while capacity is short.
   */
  private waitForCapacity<T extends TaskStateBase>(task: T, name: string): T {
    const states = capacityStates(name);
    const draw = new Pass(this, states.draw, {
      parameters: {
        seconds: JsonPath.mathRandom(CAPACITY_WAIT_SECONDS.min, CAPACITY_WAIT_SECONDS.max),
      },
      resultPath: '$.capacity',
    });
    draw.next(new Wait(this, states.wait, { time: WaitTime.secondsPath('$.capacity.seconds') })).next(task);
    task.addCatch(draw, { errors: [...CAPACITY_ERRORS], resultPath: '$.platformError' });
    return task;
  }

  /** A coordinator call that parks the execution until someone answers `$$.Task.Token` (or the timeout hits). */
  private callback(name: string, payload: Record<string, unknown>, timeoutPath: string, resultPath: string) {
    return new LambdaInvoke(this, name, {
      lambdaFunction: this.fns.Coordinator,
      integrationPattern: IntegrationPattern.WAIT_FOR_TASK_TOKEN,
      payload: TaskInput.fromObject({ ...payload, taskToken: JsonPath.taskToken }),
      taskTimeout: Timeout.at(timeoutPath),
      resultPath,
      // A retried callback Task hands out a new token; awaitRun and requestApproval take the newest.
    }).addRetry(PLATFORM_RETRY);
  }

  private coordinator(name: string, action: string, fields: Record<string, unknown>, resultPath: string) {
    return this.invoke(name, 'Coordinator', { action, ...fields }, resultPath);
  }

  private runDefinition(): IChainable {
    const runDone = new Succeed(this, R.runDone);
    const failRun = this.coordinator(
      R.failRun,
      'failRun',
      { runId, error: JsonPath.objectAt('$.error'), execution },
      JsonPath.DISCARD,
    );
    failRun.next(runDone);
    // The execution fails with the error that stopped the record (the Catch keeps it at $.lostError).
    const notRecorded = new Fail(this, R.runNotRecorded, {
      errorPath: '$.lostError.Error',
      causePath: '$.lostError.Cause',
    });
    this.recordOrFail(failRun, R.failRunAgain, notRecorded);
    const toFailRun = { errors: [Errors.ALL], resultPath: '$.error' };

    // Short of capacity (a throttle, a platform timeout), a run's first Tasks wait and try again: a run is never failed
    // `planning_failed` for the platform's load.
    const planRun = this.waitForCapacity(
      this.invoke(R.planRun, 'Planner', { runId }, JsonPath.DISCARD),
      R.planRun,
    ).addCatch(failRun, toFailRun);
    const validatePlan = this.waitForCapacity(
      this.invoke(R.validatePlan, 'Validator', { runId }, '$.validation'),
      R.validatePlan,
    ).addCatch(failRun, toFailRun);
    const rejectPlan = this.waitForCapacity(
      this.coordinator(
        R.rejectPlan,
        'rejectPlan',
        { runId, errors: JsonPath.objectAt('$.validation.errors'), execution },
        JsonPath.DISCARD,
      ),
      R.rejectPlan,
    ).addCatch(failRun, toFailRun);
    const startRun = this.waitForCapacity(
      this.coordinator(R.startRun, 'startRun', { runId }, '$.started'),
      R.startRun,
    ).addCatch(failRun, toFailRun);
    // JSONPath has no optional fields: `$.outcome` exists on every way into FinalizeRun, each field null unless set.
    // The execution's name lets the coordinator ignore the last word of an execution a reopened run has outlived.
    const finalizeRun = this.coordinator(
      R.finalizeRun,
      'finalizeRun',
      {
        runId,
        timedOut: JsonPath.objectAt('$.outcome.timedOut'),
        error: JsonPath.objectAt('$.outcome.error'),
        execution,
      },
      JsonPath.DISCARD,
    );
    this.recordOrFail(finalizeRun, R.finalizeRunAgain, notRecorded);
    const prepareAwait = new Pass(this, R.prepareAwait, {
      result: Result.fromObject({ timedOut: null, error: null }),
      resultPath: '$.outcome',
    });
    // Its Coordinator call throttled past Retry, the wait is asked again later: the run is not aborted for it. (Each
    // entry counts the deadline afresh, so a run waits at most the minutes of such waits longer.)
    const awaitRunFinished = this.waitForCapacity(
      this.callback(
        R.awaitRunFinished,
        { action: 'awaitRun', runId, execution },
        '$.started.deadlineSeconds',
        '$.awaited',
      ),
      R.awaitRunFinished,
    )
      .addCatch(finalizeRun, { errors: [Errors.TIMEOUT], resultPath: '$.outcome.timedOut' })
      .addCatch(finalizeRun, { errors: [Errors.ALL], resultPath: '$.outcome.error' });

    planRun
      .next(validatePlan)
      .next(
        new Choice(this, R.isPlanValid)
          .when(Condition.booleanEquals('$.validation.valid', false), rejectPlan.next(runDone))
          .otherwise(startRun.next(prepareAwait).next(awaitRunFinished).next(finalizeRun).next(runDone)),
      );
    // A reopened run (invalidation, manual replan) has its plan and steps already: it only waits again, with a new
    // deadline (`$.started.deadlineSeconds` comes with the input), and is finalized anew.
    const resumed = Condition.and(Condition.isPresent('$.resume'), Condition.booleanEquals('$.resume', true));
    return new Choice(this, R.resumeOrPlan).when(resumed, prepareAwait).otherwise(planRun);
  }

  /**
   * One RunStep call per step on the happy path (RunStep → Route → StepDone: three state transitions, one Lambda
   * invocation). RunStep answers `$.next`: `done`, `retry` (wait out the backoff, run the next attempt) or `await` (a
   * person decides through a task token, then RunStep judges the decision). The execution's input carries
   * `next: null` and `decision: null`, so every path the payload names exists.
   */
  private stepDefinition(): IChainable {
    const stepDone = new Succeed(this, S.stepDone);
    const runStep = this.invoke(
      S.runStep,
      'StepExecutor',
      {
        ...stepIds,
        executionId: JsonPath.executionId,
        previous: JsonPath.objectAt('$.next'),
        decision: JsonPath.objectAt('$.decision'),
        started,
      },
      '$.next',
    );
    // Short of capacity (throttled, timed out), RunStep waits and is entered again as it was: no attempt is spent,
    // whether or not it had claimed its step. Only its own errors (and a crash) are a failed attempt.
    this.waitForCapacity(runStep, S.runStep);
    // A RunStep that failed for good under load must not lose its failure to the same throttle: RecordFailure
    // retries the platform's errors too, then tries again later.
    const notRecorded = new Fail(this, S.stepNotRecorded, {
      errorPath: '$.lostError.Error',
      causePath: '$.lostError.Cause',
    });
    const recordFailure = this.recordOrFail(
      this.coordinator(
        S.recordFailure,
        'recordFailure',
        {
          ...stepIds,
          attempt: JsonPath.objectAt('$.failure.attempt'),
          error: JsonPath.objectAt('$.failure.error'),
          // What RunStep was entered with (null: its first entry): the attempt it was making, when ExecutorFailed
          // cannot say (a repeat of RecordFailure must name the same attempt, whatever the decider made of the first).
          previous: JsonPath.objectAt('$.next'),
          execution,
          started,
        },
        '$.next',
      ),
      S.recordFailureAgain,
      notRecorded,
    );
    // A RunStep that failed for good (its own error, or the platform's after the retries) is a failed attempt.
    runStep.addCatch(
      new Pass(this, S.executorFailed, {
        parameters: {
          error: {
            code: 'E_EXECUTOR',
            message: JsonPath.stringAt('$.executorError.Error'),
            retryable: true,
            details: JsonPath.objectAt('$.executorError'),
          },
          // Unknown here: the coordinator takes the step's newest attempt. A literal null would be dropped by CDK
          // (it leaves null fields out of Parameters) and RecordFailure's `$.failure.attempt` would then fail the
          // execution with States.Runtime; the intrinsic yields a JSON null that survives synthesis.
          attempt: JsonPath.stringToJson('null'),
        },
        resultPath: '$.failure',
      }).next(recordFailure),
      { errors: [Errors.ALL], resultPath: '$.executorError' },
    );

    const backoff = new Wait(this, S.backoff, { time: WaitTime.secondsPath('$.next.delaySeconds') }).next(runStep);
    const awaitDecision = this.waitForCapacity(
      this.callback(
        S.awaitDecision,
        { action: 'requestApproval', ...stepIds, kind: JsonPath.stringAt('$.next.kind'), execution, started },
        '$.next.timeoutSeconds',
        '$.decision',
      ),
      S.awaitDecision,
    )
      .addCatch(
        this.recordOrFail(
          this.coordinator(
            S.decisionExpired,
            'expireApproval',
            { ...stepIds, kind: JsonPath.stringAt('$.next.kind'), execution },
            JsonPath.DISCARD,
          ),
          S.decisionExpiredAgain,
          notRecorded,
        ).next(stepDone),
        { errors: [Errors.TIMEOUT], resultPath: '$.expired' },
      )
      .addCatch(
        new Pass(this, S.gateFailed, {
          parameters: {
            error: {
              code: 'E_GATE',
              message: JsonPath.stringAt('$.gateError.Error'),
              retryable: false,
              details: JsonPath.objectAt('$.gateError'),
            },
            attempt: JsonPath.numberAt('$.next.attempt'),
          },
          resultPath: '$.failure',
        }).next(recordFailure),
        { errors: [Errors.ALL], resultPath: '$.gateError' },
      )
      .next(runStep);

    const route = new Choice(this, S.route)
      .when(Condition.stringEquals('$.next.action', 'retry'), backoff)
      .when(Condition.stringEquals('$.next.action', 'await'), awaitDecision)
      .otherwise(stepDone);
    runStep.next(route);
    recordFailure.next(route);
    return runStep;
  }
}

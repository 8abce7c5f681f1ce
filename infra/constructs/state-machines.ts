/**
 * The run and step state machines (Standard, JSONPath only: the embedded interpreter runs neither JSONata nor
 * `Assign`). Only ids travel through Step Functions; everything else lives in the store. Every Lambda Task has a
 * timeout and every callback (waitForTaskToken) Task has a timeout path, so no wait is unbounded. Both machines log
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
  type IChainable,
  IntegrationPattern,
  JsonPath,
  LogLevel,
  Pass,
  Result,
  StateMachine,
  StateMachineType,
  Succeed,
  TaskInput,
  Timeout,
  Wait,
  WaitTime,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { FUNCTION_TIMEOUT_SECONDS, type MachineRef } from './functions.ts';
import { type FunctionKey, MACHINE_IDS, RUN_STATES as R, STEP_STATES as S } from './state-names.ts';

/** Lambda service errors worth one more try of the step executor (its own errors go to RecordFailure instead). */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
] as const;

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

/** `Result: null`: CDK only offers typed factories, and JSON null is what "no value" means in a payload. */
class NullResult extends Result {
  constructor() {
    super(null);
  }
}

export interface StateMachinesProps {
  readonly functions: Readonly<Record<FunctionKey, IFunction>>;
  readonly machines: { readonly run: MachineRef; readonly step: MachineRef };
  /** How long the execution logs are kept (default one month). */
  readonly logRetentionDays?: RetentionDays;
}

const runId = JsonPath.stringAt('$.runId');
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

  /** A synchronous Lambda call whose result is the function's return value (payloadResponseOnly). */
  private invoke(
    name: string,
    key: FunctionKey,
    payload: Record<string, unknown>,
    resultPath: string,
    retryOnServiceExceptions = true,
  ): LambdaInvoke {
    return new LambdaInvoke(this, name, {
      lambdaFunction: this.fns[key],
      payload: TaskInput.fromObject(payload),
      payloadResponseOnly: true,
      retryOnServiceExceptions,
      taskTimeout: Timeout.duration(Duration.seconds(FUNCTION_TIMEOUT_SECONDS[key] + TASK_TIMEOUT_MARGIN_SECONDS)),
      resultPath,
    });
  }

  /** A coordinator call that parks the execution until someone answers `$$.Task.Token` (or the timeout hits). */
  private callback(name: string, payload: Record<string, unknown>, timeoutPath: string, resultPath: string) {
    return new LambdaInvoke(this, name, {
      lambdaFunction: this.fns.Coordinator,
      integrationPattern: IntegrationPattern.WAIT_FOR_TASK_TOKEN,
      payload: TaskInput.fromObject({ ...payload, taskToken: JsonPath.taskToken }),
      taskTimeout: Timeout.at(timeoutPath),
      resultPath,
    });
  }

  private coordinator(name: string, action: string, fields: Record<string, unknown>, resultPath: string) {
    return this.invoke(name, 'Coordinator', { action, ...fields }, resultPath);
  }

  private runDefinition(): IChainable {
    const runDone = new Succeed(this, R.runDone);
    const failRun = this.coordinator(
      R.failRun,
      'failRun',
      { runId, error: JsonPath.objectAt('$.error') },
      JsonPath.DISCARD,
    );
    failRun.next(runDone);
    const toFailRun = { errors: [Errors.ALL], resultPath: '$.error' };

    const planRun = this.invoke(R.planRun, 'Planner', { runId }, JsonPath.DISCARD).addCatch(failRun, toFailRun);
    const validatePlan = this.invoke(R.validatePlan, 'Validator', { runId }, '$.validation').addCatch(
      failRun,
      toFailRun,
    );
    const rejectPlan = this.coordinator(
      R.rejectPlan,
      'rejectPlan',
      { runId, errors: JsonPath.objectAt('$.validation.errors') },
      JsonPath.DISCARD,
    );
    const startRun = this.coordinator(R.startRun, 'startRun', { runId }, '$.started').addCatch(failRun, toFailRun);
    // JSONPath has no optional fields: `$.outcome` exists on every way into FinalizeRun, each field null unless set.
    // The execution's name lets the coordinator ignore the last word of an execution a reopened run has outlived.
    const finalizeRun = this.coordinator(
      R.finalizeRun,
      'finalizeRun',
      {
        runId,
        timedOut: JsonPath.objectAt('$.outcome.timedOut'),
        error: JsonPath.objectAt('$.outcome.error'),
        execution: JsonPath.stringAt('$$.Execution.Name'),
      },
      JsonPath.DISCARD,
    );
    const prepareAwait = new Pass(this, R.prepareAwait, {
      result: Result.fromObject({ timedOut: null, error: null }),
      resultPath: '$.outcome',
    });
    const awaitRunFinished = this.callback(
      R.awaitRunFinished,
      { action: 'awaitRun', runId },
      '$.started.deadlineSeconds',
      '$.awaited',
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

  private stepDefinition(): IChainable {
    const stepDone = new Succeed(this, S.stepDone);
    const attempt = JsonPath.numberAt('$.claim.attempt');

    const claimStep = this.coordinator(
      S.claimStep,
      'claimStep',
      { ...stepIds, executionId: JsonPath.executionId },
      '$.claim',
    );
    const recordFailure = this.coordinator(
      S.recordFailure,
      'recordFailure',
      { ...stepIds, attempt, error: JsonPath.objectAt('$.exec.error') },
      '$.failure',
    );
    const executeStep = this.invoke(S.executeStep, 'StepExecutor', { ...stepIds, attempt }, '$.exec', false)
      .addRetry({ errors: [...LAMBDA_SERVICE_ERRORS], interval: Duration.seconds(2), maxAttempts: 2, backoffRate: 2 })
      .addCatch(
        new Pass(this, S.executorFailed, {
          parameters: {
            ok: false,
            error: {
              code: 'E_EXECUTOR',
              message: JsonPath.stringAt('$.executorError.Error'),
              retryable: true,
              details: JsonPath.objectAt('$.executorError'),
            },
          },
          resultPath: '$.exec',
        }).next(recordFailure),
        { errors: [Errors.ALL], resultPath: '$.executorError' },
      );
    const gateFailed = new Pass(this, S.gateFailed, {
      parameters: {
        ok: false,
        error: {
          code: 'E_GATE',
          message: JsonPath.stringAt('$.gateError.Error'),
          retryable: false,
          details: JsonPath.objectAt('$.gateError'),
        },
      },
      resultPath: '$.exec',
    }).next(recordFailure);

    const verifyStep = this.coordinator(
      S.verifyStep,
      'verifyStep',
      { ...stepIds, attempt, decision: JsonPath.objectAt('$.decision') },
      '$.verify',
    );
    const gate = (name: string, expiredName: string, kind: 'approval' | 'review') =>
      this.callback(
        name,
        { action: 'requestApproval', ...stepIds, kind },
        '$.claim.approvalTimeoutSeconds',
        '$.decision',
      )
        .addCatch(
          this.coordinator(expiredName, 'expireApproval', { ...stepIds, kind }, JsonPath.DISCARD).next(stepDone),
          { errors: [Errors.TIMEOUT], resultPath: '$.expired' },
        )
        .addCatch(gateFailed, { errors: [Errors.ALL], resultPath: '$.gateError' })
        .next(verifyStep);
    const awaitApproval = gate(S.awaitApproval, S.approvalExpired, 'approval');
    const awaitReview = gate(S.awaitReview, S.reviewExpired, 'review');

    recordFailure.next(
      new Choice(this, S.shouldRetry)
        .when(
          Condition.stringEquals('$.failure.decision', 'retry'),
          new Wait(this, S.backoff, { time: WaitTime.secondsPath('$.failure.delaySeconds') }).next(
            new Pass(this, S.prepareRetry, { inputPath: '$.failure.attempt', resultPath: '$.claim.attempt' }).next(
              executeStep,
            ),
          ),
        )
        .otherwise(stepDone),
    );
    executeStep.next(
      new Choice(this, S.executionOk)
        .when(
          Condition.booleanEquals('$.exec.ok', true),
          new Pass(this, S.clearDecision, { result: new NullResult(), resultPath: '$.decision' }).next(verifyStep),
        )
        .otherwise(recordFailure),
    );
    verifyStep.next(
      new Choice(this, S.verifyVerdict)
        .when(
          Condition.stringEquals('$.verify.verdict', 'pass'),
          this.coordinator(S.completeStep, 'completeStep', { ...stepIds, attempt }, JsonPath.DISCARD).next(stepDone),
        )
        .when(Condition.stringEquals('$.verify.verdict', 'review'), awaitReview)
        .otherwise(
          new Pass(this, S.verifyFailed, {
            parameters: { ok: false, error: JsonPath.objectAt('$.verify.error') },
            resultPath: '$.exec',
          }).next(recordFailure),
        ),
    );
    claimStep.next(
      new Choice(this, S.routeStep)
        .when(Condition.not(Condition.stringEquals('$.claim.outcome', 'claimed')), stepDone)
        .when(Condition.stringEquals('$.claim.kind', 'human'), awaitApproval)
        .otherwise(executeStep),
    );
    return claimStep;
  }
}

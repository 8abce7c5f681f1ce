/**
 * What each function does with Step Functions, declared once: functions.ts grants from this table and
 * test/infra/iam.test.ts checks the synthesized policies against it, and the table against the calls the Step
 * Functions adapter can make. A function's calls are those of the services it runs (the Executions port,
 * shared/ports/executions.ts): starting step executions (releases, new generations) or run executions (a new or
 * reopened run), answering a task token (a run's waiter when the service can settle a run; a step's approval), and
 * stopping the executions of steps it closes or supersedes. No function stops a run execution, fails a token or
 * describes an execution.
 */
import { ArnFormat, type Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { MachineName } from '../../shared/ports/executions.ts';
import type { FunctionKey } from './state-names.ts';

/** The Executions port's calls that deployed code makes, with the IAM action each needs and what it names. */
export const PORT_CALLS = {
  start: { action: 'states:StartExecution', on: 'machine' },
  answer: { action: 'states:SendTaskSuccess', on: 'machine' },
  stop: { action: 'states:StopExecution', on: 'executions' },
} as const;
export type PortCall = keyof typeof PORT_CALLS;

/** A state machine by name and ARN (functions.ts MachineRef). */
interface MachineRef {
  readonly name: string;
  readonly arn: string;
}

export type ExecutionCalls = Readonly<Partial<Record<PortCall, readonly MachineName[]>>>;

export const EXECUTION_CALLS: Readonly<Record<FunctionKey, ExecutionCalls>> = {
  Planner: {},
  Validator: {},
  // startRun and every follow-up start steps; cancel, a deadline or a stale wait stop steps and answer tokens.
  Coordinator: { start: ['run', 'step'], answer: ['run', 'step'], stop: ['step'] },
  // RunStep starts the dependents it releases and answers the run's waiter when its step settles the run; a claim
  // (or a side effect's gate) that finds a cancel begun and not finished finishes it (cancellation.ts): the open
  // steps' executions stopped, a revision approval's wait answered.
  StepExecutor: { start: ['step'], answer: ['run', 'step'], stop: ['step'] },
  // POST /runs, approvals (step tokens), cancel, and the invalidations it runs in process (a person's replan is
  // checked here and made by the replanner, FUNCTION_INVOKES).
  Api: { start: ['run', 'step'], answer: ['run', 'step'], stop: ['step'] },
  // New generations and a reopened run's execution; superseded steps stopped; a run it reopens and that then
  // settles (invalidation-run → checkRunEnd → settleRun) answers its run execution's waiter.
  Invalidator: { start: ['run', 'step'], answer: ['run'], stop: ['step'] },
  // A new revision's steps and a reopened run; superseded steps stopped; a run it pauses or settles answered.
  Replanner: { start: ['run', 'step'], answer: ['run'], stop: ['step'] },
  Outbox: {},
};

/**
 * Which functions each function invokes asynchronously (`lambda:InvokeFunction`, InvocationType Event): the API
 * hands its planning jobs to the planner (a plan) and the replanner (a person's replan) instead of calling the
 * model in the request (shared/adapters/aws/lambda-plan-jobs.ts). functions.ts grants from this and sets the
 * names in the caller's environment; test/infra/iam.test.ts checks the policies against it.
 */
export const FUNCTION_INVOKES: Readonly<Partial<Record<FunctionKey, readonly FunctionKey[]>>> = {
  Api: ['Planner', 'Replanner'],
};

/** The environment variable naming each invoked function (read by shared/config/settings.ts). */
export const INVOKED_FUNCTION_VARIABLE: Readonly<Partial<Record<FunctionKey, string>>> = {
  Planner: 'CAIRN_PLANNER_FUNCTION_NAME',
  Replanner: 'CAIRN_REPLANNER_FUNCTION_NAME',
};

/** The ARN a call names: the machine, or every execution of it. */
export function executionResource(stack: Stack, machine: MachineRef, on: 'machine' | 'executions'): string {
  if (on === 'machine') return machine.arn;
  return stack.formatArn({
    service: 'states',
    resource: 'execution',
    resourceName: `${machine.name}:*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}

/** One statement per call a function makes, on the machines it makes it on. */
export function grantExecutions(
  stack: Stack,
  fn: IGrantable,
  calls: ExecutionCalls,
  machines: Readonly<Record<MachineName, MachineRef>>,
): void {
  for (const [call, names] of Object.entries(calls) as [PortCall, readonly MachineName[]][]) {
    const { action, on } = PORT_CALLS[call];
    fn.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [action],
        resources: names.map((name) => executionResource(stack, machines[name], on)),
      }),
    );
  }
}

/**
 * What each function does with Step Functions and with the runs' mailbox, declared once: functions.ts grants from
 * these tables and test/infra/iam.test.ts checks the synthesized policies against them, and the tables against the
 * calls the adapters can make. With one writer per run, a run's executions are the decider's effects
 * (shared/services/runs/performing.ts): it starts step executions (releases, new generations) and run executions (a
 * reopened run), answers task tokens (a run's waiter, a step's approval) and stops the executions of steps a
 * decision closes or supersedes. Every other function sends the run a command instead. No function stops a run
 * execution, fails a token or describes an execution.
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
  // The run machine's and the step machine's tasks report to the run (StartRun, a failed attempt, a decision's
  // wait, an expired approval): commands.
  Coordinator: {},
  // RunStep reports its attempt to the run: a command; the dependents it releases are started by the decider.
  StepExecutor: {},
  // POST /runs stores the run and starts its run execution (shared/api/runs.ts), whose machine plans it; approvals,
  // cancel, invalidations and compensation are commands.
  Api: { start: ['run'] },
  // Stale steps are an Invalidate command to each watching run.
  Invalidator: {},
  // A revision is a proposal to the run (asked, and answered by the decider), a declined replan a command.
  Replanner: {},
  Outbox: {},
  // The decider performs what its decisions imply: every step and run execution is started, stopped and answered
  // here.
  Decider: { start: ['run', 'step'], answer: ['run', 'step'], stop: ['step'] },
};

/**
 * Who sends runs commands (shared/ports/mailbox.ts, `send` or `ask`): the services built on the coordinator's deps
 * (coordinator, RunStep, invalidator, replanner), the API, and the decider itself (a timer already due when it is
 * scheduled goes straight to the queue). Each gets `sqs:SendMessage` on the queue and CAIRN_MAILBOX_URL. Those that
 * `ask` (the API, the replanner) read the decider's answer back from the table (`REPLY#<id>`, their table grant).
 */
export const MAILBOX_SENDERS: readonly FunctionKey[] = [
  'Coordinator',
  'StepExecutor',
  'Api',
  'Invalidator',
  'Replanner',
  'Decider',
];

/** Who schedules timers (the shell's `schedule` effect, performed by the decider only). */
export const TIMER_SCHEDULERS: readonly FunctionKey[] = ['Decider'];

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

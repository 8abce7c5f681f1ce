/**
 * An in-memory Step Functions behind aws-sdk-client-mock, faithful to the service rules cairn depends on: names are
 * unique per state machine (an identical start of an open execution succeeds without a second execution, any other
 * reuse is ExecutionAlreadyExists), each execution parks on one callback Task whose token can be answered once,
 * a timed-out or closed token is TaskTimedOut, an unknown one InvalidToken, stopping an unknown execution is
 * ExecutionDoesNotExist.
 */
import {
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidToken,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
  TaskTimedOut,
} from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { createSfnExecutions, executionArn } from '../../shared/adapters/aws/sfn-executions.ts';
import type { MachineName } from '../../shared/ports/executions.ts';
import type { ExecutionState, ExecutionsHarness } from './executions-behaviour.ts';

export const MACHINE_ARNS: Readonly<Record<MachineName, string>> = {
  run: 'arn:aws:states:eu-west-1:123456789012:stateMachine:cairn-test-run',
  step: 'arn:aws:states:eu-west-1:123456789012:stateMachine:cairn-test-step',
};

interface FakeExecution {
  readonly arn: string;
  readonly machineArn: string;
  readonly input: string;
  readonly token: string;
  state: ExecutionState;
}

const $metadata = {};

/**
 * The fake answers one client, the one given to the adapter: several fakes can live side by side, and a mock of
 * the SFNClient class elsewhere does not see (or replace) this one.
 */
export function fakeSfnHarness(): ExecutionsHarness & { readonly mock: ReturnType<typeof mockClient> } {
  const client = new SFNClient({ region: 'eu-west-1' });
  const mock = mockClient(client);
  const executions = new Map<string, FakeExecution>();
  const byToken = new Map<string, FakeExecution>();
  let tokens = 0;

  const tokenOf = (taskToken: string | undefined): FakeExecution => {
    const execution = byToken.get(taskToken ?? '');
    if (!execution) throw new InvalidToken({ message: 'Invalid Token', $metadata });
    if (execution.state.status !== 'RUNNING') throw new TaskTimedOut({ message: 'Task Timed Out', $metadata });
    return execution;
  };

  mock.on(StartExecutionCommand).callsFake((input: { stateMachineArn: string; name: string; input: string }) => {
    const arn = executionArn(input.stateMachineArn, input.name);
    const existing = executions.get(arn);
    if (existing) {
      if (existing.state.status === 'RUNNING' && existing.input === input.input) {
        return { executionArn: arn, startDate: new Date() };
      }
      throw new ExecutionAlreadyExists({ message: `Execution Already Exists: '${arn}'`, $metadata });
    }
    const execution: FakeExecution = {
      arn,
      machineArn: input.stateMachineArn,
      input: input.input,
      token: `token-${++tokens}`,
      state: { status: 'RUNNING' },
    };
    executions.set(arn, execution);
    byToken.set(execution.token, execution);
    return { executionArn: arn, startDate: new Date() };
  });
  mock.on(SendTaskSuccessCommand).callsFake((input: { taskToken: string; output: string }) => {
    tokenOf(input.taskToken).state = { status: 'SUCCEEDED', output: JSON.parse(input.output) };
    return {};
  });
  mock.on(SendTaskFailureCommand).callsFake((input: { taskToken: string; error?: string; cause?: string }) => {
    tokenOf(input.taskToken).state = { status: 'FAILED', error: input.error ?? '', cause: input.cause ?? '' };
    return {};
  });
  mock.on(StopExecutionCommand).callsFake((input: { executionArn: string; error?: string; cause?: string }) => {
    const execution = executions.get(input.executionArn);
    if (!execution) throw new ExecutionDoesNotExist({ message: 'Execution Does Not Exist', $metadata });
    if (execution.state.status === 'RUNNING') {
      execution.state = { status: 'ABORTED', error: input.error ?? '', cause: input.cause ?? '' };
    }
    return { stopDate: new Date() };
  });

  const adapter = createSfnExecutions({ machineArns: MACHINE_ARNS, client });
  return {
    mock,
    executions: adapter,
    async startWaiting(machine, name, input) {
      const { executionId } = await adapter.start(machine, name, input);
      const execution = executions.get(executionId);
      if (!execution) throw new Error(`fake SFN has no execution ${executionId}`);
      return { executionId, token: execution.token };
    },
    count(machine, name) {
      return executions.has(executionArn(MACHINE_ARNS[machine], name)) ? 1 : 0;
    },
    state(executionId) {
      return executions.get(executionId)?.state;
    },
    async settle() {},
    async expire(token) {
      const execution = byToken.get(token);
      if (execution?.state.status === 'RUNNING') {
        execution.state = { status: 'FAILED', error: 'States.Timeout', cause: 'the task timed out' };
      }
    },
    async stop() {
      mock.restore();
    },
  };
}

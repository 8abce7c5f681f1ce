/**
 * The Executions port's behaviour (test/support/executions-behaviour.ts) on the embedded adapter, over a machine of
 * one callback Task: starts, duplicates, task tokens, timeouts and stops, without the run and step machines' logic.
 */

import { createLocalExecutions } from '../../infra/local/local-executions.ts';
import type { AslDefinition } from '../../infra/local/synth.ts';
import {
  describeExecutionsBehaviour,
  type ExecutionState,
  type ExecutionsHarness,
} from '../support/executions-behaviour.ts';
import { waitFor } from '../support/scripted-executions.ts';

/** One callback Task that waits as long as the input says: the port's behaviour without the machines' logic. */
const WAITER_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:Waiter';
const waitingMachine: AslDefinition = {
  StartAt: 'Wait',
  States: {
    Wait: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      Parameters: {
        FunctionName: WAITER_ARN,
        Payload: { 'executionId.$': '$$.Execution.Id', 'taskToken.$': '$$.Task.Token' },
      },
      TimeoutSecondsPath: '$.timeoutSeconds',
      End: true,
    },
  },
};

function localHarness(): ExecutionsHarness {
  const tokens = new Map<string, string>();
  const ex = createLocalExecutions({
    definitions: { run: waitingMachine, step: waitingMachine },
    functionOf: (resource) => (resource === WAITER_ARN ? 'Waiter' : undefined),
    handlers: {
      Waiter: async (payload) => {
        const { executionId, taskToken } = payload as { executionId: string; taskToken: string };
        tokens.set(executionId, taskToken);
        return {};
      },
    },
    onError: () => {},
  });
  const state = (executionId: string): ExecutionState | undefined => {
    const info = ex.list().find((entry) => entry.executionId === executionId);
    if (!info) return undefined;
    if (info.status === 'RUNNING') return { status: 'RUNNING' };
    if (info.status === 'SUCCEEDED') return { status: 'SUCCEEDED', output: info.output };
    return { status: info.status, error: info.error?.error ?? '', cause: info.error?.cause ?? '' };
  };
  return {
    executions: ex,
    async startWaiting(machine, name, input) {
      const { executionId } = await ex.start(machine, name, input);
      await ex.idle();
      const token = tokens.get(executionId);
      if (token === undefined) throw new Error(`execution ${executionId} is not waiting on a token`);
      return { executionId, token };
    },
    count: (machine, name) => ex.list().filter((info) => info.machine === machine && info.name === name).length,
    state,
    settle: () => ex.idle(),
    async expire(_token, executionId) {
      await waitFor(() => state(executionId)?.status !== 'RUNNING');
    },
    async stop() {
      ex.close();
    },
  };
}

describeExecutionsBehaviour('embedded (aws-local-stepfunctions)', async () => localHarness());

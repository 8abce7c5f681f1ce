/**
 * The Executions port on AWS Step Functions. Starts use deterministic names, so a duplicate start is harmless:
 * Step Functions answers `ExecutionAlreadyExists` (reported as `started: false`), or, for an identical start of a
 * still-running execution, succeeds without starting a second one (reported as `started: true`, same execution).
 * Answering a token that is no longer open (answered, timed out, execution ended) is a ConflictError: the waiter
 * has moved on, and the caller decides whether that matters. Stopping an execution that does not exist is a no-op.
 */
import {
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { ConflictError } from '../../errors.ts';
import type { Executions, MachineName, StartResult } from '../../ports/executions.ts';
import { sfnClient } from './clients.ts';

export interface SfnExecutionsOptions {
  readonly machineArns: Readonly<Record<MachineName, string>>;
  readonly client?: SFNClient;
}

/** Step Functions limits on SendTaskFailure / StopExecution: longer values are rejected, so they are cut. */
const MAX_ERROR_CHARS = 256;
const MAX_CAUSE_CHARS = 32_768;
const CLOSED_TOKEN_ERRORS = new Set(['TaskTimedOut', 'TaskDoesNotExist', 'InvalidToken']);

const nameOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null ? (error as { name?: unknown }).name?.toString() : undefined;

/** `arn:aws:states:<region>:<account>:stateMachine:<machine>` → `...:execution:<machine>:<name>`. */
export function executionArn(machineArn: string, name: string): string {
  return `${machineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

export function createSfnExecutions(options: SfnExecutionsOptions): Executions {
  const client = options.client ?? sfnClient();

  const answer = async (taskToken: string, send: () => Promise<unknown>): Promise<void> => {
    try {
      await send();
    } catch (error) {
      const reason = nameOf(error);
      if (reason !== undefined && CLOSED_TOKEN_ERRORS.has(reason)) {
        throw new ConflictError('The task token is not open: it was answered, timed out or never issued', {
          cause: error,
          context: { reason, taskToken },
        });
      }
      throw error;
    }
  };

  const executions: Executions = {
    async start(machine, name, input): Promise<StartResult> {
      const stateMachineArn = options.machineArns[machine];
      try {
        const result = await client.send(
          new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }),
        );
        return { executionId: result.executionArn ?? executionArn(stateMachineArn, name), started: true };
      } catch (error) {
        if (nameOf(error) === 'ExecutionAlreadyExists') {
          return { executionId: executionArn(stateMachineArn, name), started: false };
        }
        throw error;
      }
    },

    async sendTaskSuccess(taskToken, output) {
      await answer(taskToken, () =>
        client.send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output ?? null) })),
      );
    },

    async sendTaskFailure(taskToken, error, cause) {
      await answer(taskToken, () =>
        client.send(
          new SendTaskFailureCommand({
            taskToken,
            error: error.slice(0, MAX_ERROR_CHARS),
            cause: cause.slice(0, MAX_CAUSE_CHARS),
          }),
        ),
      );
    },

    async stop(executionId, error, cause) {
      try {
        await client.send(
          new StopExecutionCommand({
            executionArn: executionId,
            error: error.slice(0, MAX_ERROR_CHARS),
            cause: cause.slice(0, MAX_CAUSE_CHARS),
          }),
        );
      } catch (failure) {
        if (nameOf(failure) === 'ExecutionDoesNotExist') return;
        throw failure;
      }
    },

    stopNamed(machine, name, error, cause) {
      return executions.stop(executionArn(options.machineArns[machine], name), error, cause);
    },
  };
  return executions;
}

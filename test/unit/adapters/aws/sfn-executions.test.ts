import {
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  ExecutionLimitExceeded,
  InvalidToken,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
} from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-vitest/extend';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createSfnExecutions, executionArn } from '../../../../shared/adapters/aws/sfn-executions.ts';
import { ConflictError, isConflictError } from '../../../../shared/errors.ts';
import { runExecutionName, stepExecutionName } from '../../../../shared/ports/executions.ts';
import { describeExecutionsBehaviour } from '../../../support/executions-behaviour.ts';
import { fakeSfnHarness, MACHINE_ARNS } from '../../../support/fake-sfn.ts';
import { RecordedExecutions } from '../../../support/recorded-executions.ts';

const $metadata = {};
const sfn = mockClient(SFNClient);
const adapter = () =>
  createSfnExecutions({ machineArns: MACHINE_ARNS, client: new SFNClient({ region: 'eu-west-1' }) });
const caught = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );

describe('createSfnExecutions', () => {
  beforeEach(() => {
    sfn.reset();
  });
  afterAll(() => {
    sfn.restore();
  });

  describe('start', () => {
    it('starts the run machine under the run execution name with the JSON input', async () => {
      const name = runExecutionName('r-1');
      const arn = executionArn(MACHINE_ARNS.run, name);
      sfn.on(StartExecutionCommand).resolves({ executionArn: arn, startDate: new Date() });

      const result = await adapter().start('run', name, { runId: 'r-1' });

      expect(result).toEqual({ executionId: arn, started: true });
      expect(sfn).toHaveReceivedCommandTimes(StartExecutionCommand, 1);
      expect(sfn).toHaveReceivedCommandWith(StartExecutionCommand, {
        stateMachineArn: MACHINE_ARNS.run,
        name: 'run-r-1',
        input: '{"runId":"r-1"}',
      });
    });

    it('starts the step machine under the deterministic step execution name', async () => {
      const name = stepExecutionName('r-1', 'collect.web', 2);
      sfn.on(StartExecutionCommand).resolves({ executionArn: executionArn(MACHINE_ARNS.step, name) });

      await adapter().start('step', name, { runId: 'r-1', stepId: 'collect.web', generation: 2 });

      expect(sfn).toHaveReceivedCommandWith(StartExecutionCommand, {
        stateMachineArn: MACHINE_ARNS.step,
        name: 'r-1-collect_2eweb-g2',
        input: JSON.stringify({ runId: 'r-1', stepId: 'collect.web', generation: 2 }),
      });
    });

    it('reports started:false with the existing execution when the name is taken', async () => {
      sfn.on(StartExecutionCommand).rejects(new ExecutionAlreadyExists({ message: 'exists', $metadata }));

      const result = await adapter().start('step', 'r-1-a-g1', { runId: 'r-1', stepId: 'a', generation: 1 });

      expect(result).toEqual({
        executionId: 'arn:aws:states:eu-west-1:123456789012:execution:cairn-test-step:r-1-a-g1',
        started: false,
      });
    });

    it('passes any other failure on unchanged', async () => {
      const limit = new ExecutionLimitExceeded({ message: 'too many', $metadata });
      sfn.on(StartExecutionCommand).rejects(limit);

      const error = await caught(adapter().start('run', 'run-r-2', { runId: 'r-2' }));

      expect(error).toBe(limit);
    });
  });

  describe('task answers', () => {
    it('sends SendTaskSuccess with the token and the output as JSON', async () => {
      sfn.on(SendTaskSuccessCommand).resolves({});

      await adapter().sendTaskSuccess('tok-1', { finished: true });

      expect(sfn).toHaveReceivedCommandWith(SendTaskSuccessCommand, {
        taskToken: 'tok-1',
        output: '{"finished":true}',
      });
    });

    it('sends null as the output when there is none', async () => {
      sfn.on(SendTaskSuccessCommand).resolves({});

      await adapter().sendTaskSuccess('tok-1', undefined);

      expect(sfn).toHaveReceivedCommandWith(SendTaskSuccessCommand, { taskToken: 'tok-1', output: 'null' });
    });

    it('sends SendTaskFailure with the error and cause, cut to the service limits', async () => {
      sfn.on(SendTaskFailureCommand).resolves({});

      await adapter().sendTaskFailure('tok-2', `E${'x'.repeat(300)}`, 'c'.repeat(40_000));

      expect(sfn).toHaveReceivedCommandWith(SendTaskFailureCommand, {
        taskToken: 'tok-2',
        error: `E${'x'.repeat(255)}`,
        cause: 'c'.repeat(32_768),
      });
    });

    it.each([
      ['TaskTimedOut', new TaskTimedOut({ message: 'Task Timed Out', $metadata })],
      ['TaskDoesNotExist', new TaskDoesNotExist({ message: 'no task', $metadata })],
      ['InvalidToken', new InvalidToken({ message: 'Invalid Token', $metadata })],
    ])('turns %s on an answer into a ConflictError that names the reason', async (reason, serviceError) => {
      sfn.on(SendTaskSuccessCommand).rejects(serviceError);
      sfn.on(SendTaskFailureCommand).rejects(serviceError);

      const success = await caught(adapter().sendTaskSuccess('tok-3', {}));
      const failure = await caught(adapter().sendTaskFailure('tok-3', 'E', 'c'));

      for (const error of [success, failure]) {
        expect(error).toBeInstanceOf(ConflictError);
        expect(isConflictError(error) && error.context).toEqual({ reason, taskToken: 'tok-3' });
        expect(isConflictError(error) && error.retryable).toBe(false);
      }
    });

    it('passes throttling and other service errors on unchanged', async () => {
      const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
      sfn.on(SendTaskSuccessCommand).rejects(throttled);

      const error = await caught(adapter().sendTaskSuccess('tok-4', {}));

      expect(error).toBe(throttled);
    });
  });

  describe('stop', () => {
    it('sends StopExecution with the execution ARN, error and cause', async () => {
      sfn.on(StopExecutionCommand).resolves({ stopDate: new Date() });
      const arn = executionArn(MACHINE_ARNS.step, 'r-1-a-g1');

      await adapter().stop(arn, 'RunDeadline', 'the run passed its deadline');

      expect(sfn).toHaveReceivedCommandWith(StopExecutionCommand, {
        executionArn: arn,
        error: 'RunDeadline',
        cause: 'the run passed its deadline',
      });
    });

    it('ignores ExecutionDoesNotExist and passes other failures on', async () => {
      const denied = Object.assign(new Error('denied'), { name: 'AccessDeniedException' });
      sfn
        .on(StopExecutionCommand)
        .rejectsOnce(new ExecutionDoesNotExist({ message: 'gone', $metadata }))
        .rejects(denied);

      await adapter().stop('arn:aws:states:eu-west-1:123456789012:execution:m:x', 'E', 'c');
      const error = await caught(adapter().stop('arn:aws:states:eu-west-1:123456789012:execution:m:y', 'E', 'c'));

      expect(error).toBe(denied);
    });
  });
});

describeExecutionsBehaviour('Step Functions (mocked)', async () => fakeSfnHarness());

// The API tests' executions: this adapter on the same fake, with a record of the calls that must change nothing.
describeExecutionsBehaviour('Step Functions (mocked), recorded for the API tests', async () => {
  const recorded = new RecordedExecutions();
  return { ...recorded.sfn, executions: recorded };
});

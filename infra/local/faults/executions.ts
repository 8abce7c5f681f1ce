/**
 * `sfn.start`: faults on StartExecution. `throttle`: Step Functions refused the start (nothing started).
 * `duplicate`: the start is made twice, as a client that lost the first answer and tried again would; the caller
 * hears the second answer (the name already exists: `started: false`).
 */
import type { Executions } from '../../../shared/ports/executions.ts';
import { sfnThrottle } from './aws-errors.ts';
import type { FaultInjector } from './injector.ts';

export function faultyExecutions(faults: FaultInjector, executions: Executions): Executions {
  if (!faults.covers('sfn.start')) return executions;
  return {
    async start(machine, name, input) {
      const rule = faults.draw('sfn.start');
      if (rule === undefined) return executions.start(machine, name, input);
      if (rule.fault === 'throttle') throw sfnThrottle(name);
      await executions.start(machine, name, input);
      return executions.start(machine, name, input);
    },
    sendTaskSuccess: (token, output) => executions.sendTaskSuccess(token, output),
    sendTaskFailure: (token, error, cause) => executions.sendTaskFailure(token, error, cause),
    stop: (executionId, error, cause) => executions.stop(executionId, error, cause),
    stopNamed: (machine, name, error, cause) => executions.stopNamed(machine, name, error, cause),
  };
}

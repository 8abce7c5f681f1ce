/**
 * `cairn invalidate <runId> <stepId> [--reason <text>] [--json]`: marks a step's result stale. The step (a group:
 * every step in it) and everything downstream of it start a new generation; upstream and unrelated steps keep their
 * results; a finished run reopens and reaches a new terminal state.
 * Exit codes: 0 invalidated; 1 refused by the API (unknown run or step: 404, run not started or cancelled: 409);
 * 2 bad usage.
 */
import { type CommandRun, UsageError } from '../io.ts';
import { apiCommand, type CliDeps, CONNECTION_HELP, printLine, stringFlag } from './api-command.ts';

const USAGE = `usage: cairn invalidate <runId> <stepId> [options]

  --reason <text>           why the step's result is stale (recorded with the invalidation)
  --json                    print the answer as JSON
${CONNECTION_HELP}

exit codes: 0 invalidated; 1 refused by the API (unknown run or step: 404, run not started or cancelled: 409);
2 bad usage
`;

export function createInvalidateCommand(deps: CliDeps = {}): CommandRun {
  return apiCommand(
    { name: 'invalidate', usage: USAGE, options: { reason: { type: 'string' } } },
    deps,
    async (call) => {
      const { positionals } = call;
      const [runId, stepId, ...extra] = positionals;
      if (runId === undefined || stepId === undefined) throw new UsageError('needs a run id and a step id');
      if (extra.length > 0) throw new UsageError(`one step at a time, got ${positionals.length - 1}`);
      const reason = stringFlag(call.values, 'reason');
      if (reason?.trim() === '') throw new UsageError('--reason must not be blank');
      const answer = await call.client().invalidate(runId, stepId, reason);
      return printLine(call, answer, () =>
        answer.stepIds.length === 0
          ? `run ${answer.runId}: nothing invalidated (another invalidation got there first)`
          : `run ${answer.runId}: ${answer.stepIds.join(', ')} start a new generation` +
            `${answer.reopened ? '; the run reopened' : ''} (cairn status ${answer.runId} --watch)`,
      );
    },
  );
}

export const run: CommandRun = createInvalidateCommand();

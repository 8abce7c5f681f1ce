/**
 * `cairn replan <runId> --reason <text> [--objective <text>] [--json]`: asks for a person's replan of the run; the
 * planner gets the reason and the new objective. A finished run is reopened on the new revision; a revision that
 * adds a mutating target waits for approval (`cairn approvals`). A cancelled run, the replan limit or a revision
 * already waiting is refused (409); a replan the planner finds no revision for is refused too (422).
 * Exit codes: 0 replanned (or a concurrent replan made the revision, or it waits for approval); 1 refused by the
 * API; 2 bad usage.
 */
import { type CommandRun, UsageError } from '../io.ts';
import { apiCommand, type CliDeps, CONNECTION_HELP, oneId, printLine, stringFlag } from './api-command.ts';

const USAGE = `usage: cairn replan <runId> --reason <text> [options]

  --reason <text>           why a person asks for the replan (the planner reads it; recorded with the revision)
  --objective <text>        a new objective for the run (the planner plans for it; the run's objective changes)
  --json                    print the answer as JSON
${CONNECTION_HELP}

exit codes: 0 replanned (or waiting for approval); 1 refused by the API (cancelled run, replan limit or a revision
waiting: 409, no revision possible: 422); 2 bad usage
`;

export function createReplanCommand(deps: CliDeps = {}): CommandRun {
  return apiCommand(
    { name: 'replan', usage: USAGE, options: { reason: { type: 'string' }, objective: { type: 'string' } } },
    deps,
    async (call) => {
      const runId = oneId(call.positionals, 'missing the run id', 'run id');
      const reason = stringFlag(call.values, 'reason');
      if (reason === undefined || reason.trim() === '') throw new UsageError('--reason <text> is required');
      const objective = stringFlag(call.values, 'objective');
      if (objective !== undefined && objective.trim() === '') throw new UsageError('--objective must not be blank');
      const answer = await call.client().replan(runId, reason, objective);
      return printLine(call, answer, () =>
        answer.approvalId !== undefined
          ? `run ${answer.runId}: the new revision adds a mutating target and waits for approval ${answer.approvalId} (cairn approve ${answer.approvalId})`
          : answer.revision === undefined
            ? `run ${answer.runId}: another replan revised the plan first (see cairn status ${answer.runId})`
            : `run ${answer.runId}: replanned as revision ${answer.revision} (cairn status ${answer.runId} --watch)`,
      );
    },
  );
}

export const run: CommandRun = createReplanCommand();

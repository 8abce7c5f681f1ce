/**
 * `cairn replan <runId> --reason <text> [--json]`: asks for a scoped replan of the run's failed step (or of the gate
 * its approval timeout left waiting). A finished run is reopened on the new revision. The replan limit, a cancelled
 * run or nothing to replan is refused (409); a replan the planner finds no revision for is refused too (422).
 * Exit codes: 0 replanned (or a concurrent replan made the revision); 1 refused by the API; 2 bad usage.
 */
import { type CommandRun, UsageError } from '../io.ts';
import { apiCommand, type CliDeps, CONNECTION_HELP, oneId, printAnswer, stringFlag } from './api-command.ts';

const USAGE = `usage: cairn replan <runId> --reason <text> [options]

  --reason <text>           why a person asks for the replan (recorded with the new revision)
  --json                    print the answer as JSON
${CONNECTION_HELP}

exit codes: 0 replanned; 1 refused by the API (replan limit or nothing to replan: 409, no revision possible: 422);
2 bad usage
`;

export function createReplanCommand(deps: CliDeps = {}): CommandRun {
  return apiCommand({ name: 'replan', usage: USAGE, options: { reason: { type: 'string' } } }, deps, async (call) => {
    const runId = oneId(call.positionals, 'missing the run id', 'run id');
    const reason = stringFlag(call.values, 'reason');
    if (reason === undefined || reason.trim() === '') throw new UsageError('--reason <text> is required');
    const answer = await call.client().replan(runId, reason);
    return printAnswer(call, answer, () =>
      answer.revision === undefined
        ? `run ${answer.runId}: another replan revised the plan first (see cairn status ${answer.runId})\n`
        : `run ${answer.runId}: replanned as revision ${answer.revision} (cairn status ${answer.runId} --watch)\n`,
    );
  });
}

export const run: CommandRun = createReplanCommand();

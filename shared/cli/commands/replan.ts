/**
 * `cairn replan <runId> --reason <text> [--json]`: asks for a scoped replan of the run's failed step (or of the gate
 * its approval timeout left waiting). A finished run is reopened on the new revision. The replan limit, a cancelled
 * run or nothing to replan is refused (409); a replan the planner finds no revision for is refused too (422).
 * Exit codes: 0 replanned (or a concurrent replan made the revision); 1 refused by the API; 2 bad usage.
 */
import { type CommandRun, EXIT_OK, UsageError } from '../io.ts';
import { type CliDeps, CONNECTION_HELP, clientOf, guarded, parseFlags, stringFlag } from './api-command.ts';

const USAGE = `usage: cairn replan <runId> --reason <text> [options]

  --reason <text>           why a person asks for the replan (recorded with the new revision)
  --json                    print the answer as JSON
${CONNECTION_HELP}

exit codes: 0 replanned; 1 refused by the API (replan limit or nothing to replan: 409, no revision possible: 422);
2 bad usage
`;

export function createReplanCommand(deps: CliDeps = {}): CommandRun {
  return (argv, io) =>
    guarded('replan', USAGE, io, async () => {
      const { values, positionals } = parseFlags(argv, {
        reason: { type: 'string' },
        json: { type: 'boolean' },
        api: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      });
      if (values.help) {
        io.stdout(USAGE);
        return EXIT_OK;
      }
      const [runId, ...extra] = positionals;
      if (runId === undefined) throw new UsageError('missing the run id');
      if (extra.length > 0) throw new UsageError(`one run id at a time, got ${positionals.length}`);
      const reason = stringFlag(values, 'reason');
      if (reason === undefined || reason.trim() === '') throw new UsageError('--reason <text> is required');
      const answer = await clientOf(values, io, deps).replan(runId, reason);
      if (values.json) io.stdout(`${JSON.stringify(answer, null, 2)}\n`);
      else
        io.stdout(
          answer.revision === undefined
            ? `run ${answer.runId}: another replan revised the plan first (see cairn status ${answer.runId})\n`
            : `run ${answer.runId}: replanned as revision ${answer.revision} (cairn status ${answer.runId} --watch)\n`,
        );
      return EXIT_OK;
    });
}

export const run: CommandRun = createReplanCommand();

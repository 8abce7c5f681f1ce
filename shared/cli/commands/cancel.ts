/**
 * `cairn cancel <runId> [--compensate] [--json]`: cancels a run (idempotent: a run already cancelled, or being
 * cancelled, is answered as it stands). `--compensate` first undoes the finished mutating steps of its segments.
 */
import type { CommandRun } from '../io.ts';
import { API_EXIT_HELP, apiCommand, type CliDeps, CONNECTION_HELP, oneId, printLine } from './api-command.ts';

const USAGE = `usage: cairn cancel <runId> [options]

  --compensate              undo the run's finished mutating steps (its saga segments) before it ends
  --json                    print the answer as JSON
${CONNECTION_HELP}

exit codes: 0 cancelled (or being cancelled); 1 refused by the API (an unknown run is 404); 2 bad usage;
${API_EXIT_HELP}
`;

export function createCancelCommand(deps: CliDeps = {}): CommandRun {
  return apiCommand(
    { name: 'cancel', usage: USAGE, options: { compensate: { type: 'boolean' } } },
    deps,
    async (call) => {
      const runId = oneId(call.positionals, 'missing the run id', 'run id');
      const compensate = call.values.compensate === true;
      const answer = await call.client().cancelRun(runId, compensate ? { compensate } : {});
      return printLine(call, answer, () =>
        answer.status === 'cancelled'
          ? `run ${answer.runId} cancelled`
          : `run ${answer.runId} is being cancelled (${answer.status} until it ends; cairn status ${answer.runId} --watch)`,
      );
    },
  );
}

export const run: CommandRun = createCancelCommand();

/**
 * `cairn status <runId> [--watch] [--json]`: the run's status, progress and steps, read through the API.
 * Exit codes: 0 shown; 1 the API refused (unknown run: 404); 2 bad usage. With `--watch`: 0 complete, 1 failed or
 * cancelled, 3 paused (waiting for a person).
 */
import type { RunView, StepView } from '../../api/client.ts';
import { counter, DEFAULT_POLL_MS } from '../../api/watch.ts';
import { terminalLine } from '../../terminal-text.ts';
import type { CommandRun } from '../io.ts';
import {
  API_EXIT_HELP,
  apiCommand,
  type CliDeps,
  CONNECTION_HELP,
  oneId,
  positiveMs,
  printAnswer,
  steadyOf,
  stringFlag,
  WATCH_EXIT_HELP,
} from './api-command.ts';
import { watchToExit } from './follow.ts';

const USAGE = `usage: cairn status <runId> [options]

  --watch                   follow the run until it ends or waits for a person
  --interval <ms>           least ms between reads of the run (--watch; default ${DEFAULT_POLL_MS})
  --json                    print the run as JSON (with --watch: one JSON line per event)
${CONNECTION_HELP}

exit codes: 0 shown; 1 refused by the API (an unknown run is 404); 2 bad usage; ${API_EXIT_HELP}
${WATCH_EXIT_HELP}
`;

const oneLine = (text: string, max = 100): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

function stepLine(step: StepView, depth: number): string {
  const indent = '  '.repeat(depth);
  const what = step.target ?? 'group';
  const attempts = step.target !== null && step.attempts > 0 ? `  attempts ${step.attempts}` : '';
  const generation = step.generation !== null && step.generation > 1 ? `  generation ${step.generation}` : '';
  const error = step.error ? `  ${step.error.code}: ${oneLine(step.error.message)}` : '';
  return `  ${step.status.padEnd(18)} ${indent}${step.id}  (${what})${attempts}${generation}${error}`;
}

/** A readable picture of a run: header, terminal reason, then the steps in plan order, children indented. */
export function formatRun(run: RunView): string {
  const { done, total } = counter(run);
  const lines = [
    `run ${run.runId}  ${run.status}  revision ${run.revision}  [${done}/${total} steps done]`,
    `  objective: ${oneLine(run.objective, 200)}`,
  ];
  if (run.terminal) lines.push(`  ${run.terminal.state}: ${oneLine(run.terminal.reason, 200)}`);
  const depthOf = new Map<string, number>();
  for (const step of run.steps) {
    const depth = step.parentId === null ? 0 : (depthOf.get(step.parentId) ?? 0) + 1;
    depthOf.set(step.id, depth);
    lines.push(stepLine(step, depth));
  }
  if (run.steps.length === 0 && run.status === 'planning') lines.push('  (planning: no steps yet)');
  if (run.status === 'queued') lines.push("  (queued: it starts when one of its tenant's running runs ends)");
  // Each line is one line: whatever a field carries (a CR, an ESC sequence) shows as an escape on it.
  return `${lines.map(terminalLine).join('\n')}\n`;
}

export function createStatusCommand(deps: CliDeps = {}): CommandRun {
  const options = { watch: { type: 'boolean' }, interval: { type: 'string' } } as const;
  return apiCommand({ name: 'status', usage: USAGE, options }, deps, async (call) => {
    const runId = oneId(call.positionals, 'missing the run id', 'run id');
    const intervalMs = positiveMs(stringFlag(call.values, 'interval'));
    const client = call.client();
    if (call.values.watch) {
      const json = call.values.json === true;
      return watchToExit(client, runId, { io: call.io, name: 'status', json, intervalMs, ...steadyOf(deps) });
    }
    return printAnswer(call, await client.getWholeRun(runId), formatRun);
  });
}

export const run: CommandRun = createStatusCommand();

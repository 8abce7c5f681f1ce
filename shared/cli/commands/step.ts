/**
 * `cairn step <runId> <stepId> [--json]`: one step whole, as GET /runs/{runId}/steps/{stepId} answers it: its
 * definition, record (output, error, trace), every attempt of every generation, and the approvals asked about it.
 */
import type { StepDetail } from '../../api/client.ts';
import { terminalLine } from '../../terminal-text.ts';
import { type CommandRun, UsageError } from '../io.ts';
import { API_EXIT_HELP, apiCommand, type CliDeps, CONNECTION_HELP, printAnswer } from './api-command.ts';

const USAGE = `usage: cairn step <runId> <stepId> [options]

  --json                    print the step as JSON (outputs and traces whole)
${CONNECTION_HELP}

exit codes: 0 shown; 1 refused by the API (an unknown run or step is 404); 2 bad usage; ${API_EXIT_HELP}
`;

const PREVIEW_CHARS = 200;
const preview = (value: unknown): string => {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
};

/** A readable picture of a step; each line escapes what it shows (a field's newline stays on its line). */
export function formatStep(detail: StepDetail): string {
  const { step, record } = detail;
  const lines = [
    `step ${step.id}  ${detail.status}  (${step.target ?? 'group'})  run ${detail.runId}  revision ${detail.revision}`,
    `  title: ${step.title}`,
  ];
  if (step.dependsOn.length > 0) lines.push(`  depends on: ${step.dependsOn.join(', ')}`);
  if (detail.children.length > 0) lines.push(`  children: ${detail.children.join(', ')}`);
  if (record) {
    lines.push(
      `  generation ${record.generation}, attempts ${record.attempts}` +
        `${record.startedAt ? `, started ${record.startedAt}` : ''}${record.finishedAt ? `, finished ${record.finishedAt}` : ''}`,
    );
    if (record.output !== null) lines.push(`  output: ${preview(record.output)}`);
    if (record.error) lines.push(`  error: ${record.error.code}: ${record.error.message}`);
    if (record.confidence !== null) lines.push(`  confidence: ${record.confidence}`);
    for (const entry of record.trace) lines.push(`  [${entry.kind}] ${entry.at} ${entry.text}`);
  }
  if (detail.attempts.length > 0) lines.push('  attempts:');
  for (const a of detail.attempts) {
    const error = a.error ? `  ${a.error.code}: ${a.error.message}` : '';
    lines.push(
      `    g${a.generation} #${a.attempt} ${a.outcome} ${a.target} ${a.startedAt}${a.finishedAt ? ` → ${a.finishedAt}` : ''}${error}`,
    );
  }
  if (detail.approvals.length > 0) lines.push('  approvals:');
  for (const a of detail.approvals)
    lines.push(`    ${a.approvalId} ${a.kind} ${a.status}: ${a.question}${a.decidedBy ? ` (by ${a.decidedBy})` : ''}`);
  return `${lines.map(terminalLine).join('\n')}\n`;
}

export function createStepCommand(deps: CliDeps = {}): CommandRun {
  return apiCommand({ name: 'step', usage: USAGE, options: {} }, deps, async (call) => {
    const [runId, stepId, ...extra] = call.positionals;
    if (runId === undefined || stepId === undefined) throw new UsageError('needs a run id and a step id');
    if (extra.length > 0) throw new UsageError(`one step at a time, got ${call.positionals.length - 1}`);
    return printAnswer(call, await call.client().getStep(runId, stepId), formatStep);
  });
}

export const run: CommandRun = createStepCommand();

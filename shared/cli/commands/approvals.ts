/**
 * `cairn approvals [--status S|all] [--run <runId>] [--json]`: the approvals waiting for a person (by default the
 * pending ones), with the question, the step and the deadline. Exit codes: 0 listed (also when there are none);
 * 1 the API refused; 2 bad usage.
 */
import type { ApprovalView } from '../../api/client.ts';
import { terminalBlock, terminalLine } from '../../terminal-text.ts';
import { type CommandRun, UsageError } from '../io.ts';
import { apiCommand, type CliDeps, CONNECTION_HELP, printAnswer, stringFlag } from './api-command.ts';

const STATUSES = ['pending', 'approved', 'rejected', 'edited', 'expired', 'all'] as const;
type StatusFlag = (typeof STATUSES)[number];
const isStatus = (text: string): text is StatusFlag => (STATUSES as readonly string[]).includes(text);

const USAGE = `usage: cairn approvals [options]

  --status <status>         pending (default), approved, rejected, edited, expired or all
  --run <runId>             only the approvals of this run
  --json                    print the approvals as JSON
${CONNECTION_HELP}

Decide one with \`cairn approve <approvalId> [--reject] [--comment text] [--output json]\`.
exit codes: 0 listed; 1 refused by the API; 2 bad usage
`;

const preview = (value: unknown, max = 160): string => {
  if (value === undefined) return '';
  const text = JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

const QUESTION = '  question: ';

/**
 * A question may take several lines, as its author wrote it: they stay, each indented under the first, so none
 * reads as a line of the listing; its other controls show as escapes.
 */
const questionLines = (question: string): string =>
  `${QUESTION}${terminalBlock(question).replaceAll('\n', `\n${' '.repeat(QUESTION.length)}`)}`;

export function formatApproval(approval: ApprovalView): string {
  // Every line but the question's is one line: a field's newline or CR shows as an escape on it.
  const lines = [
    terminalLine(
      `${approval.approvalId}  ${approval.kind}  ${approval.status}  run ${approval.runId}  step ${approval.stepId}` +
        `  deadline ${approval.deadline}`,
    ),
    questionLines(approval.question),
  ];
  const line = (text: string) => lines.push(terminalLine(text));
  if (approval.heldOutput !== undefined) line(`  result to review: ${preview(approval.heldOutput)}`);
  if (approval.input !== undefined) line(`  input: ${preview(approval.input)}`);
  const upstream = Object.keys(approval.upstreamOutputs ?? {});
  if (upstream.length > 0) line(`  upstream outputs: ${upstream.join(', ')}`);
  if (approval.decidedBy !== undefined) {
    line(
      `  decided by ${approval.decidedBy} at ${approval.decidedAt ?? '?'}${approval.comment ? `: ${approval.comment}` : ''}`,
    );
  }
  return lines.join('\n');
}

export function createApprovalsCommand(deps: CliDeps = {}): CommandRun {
  const options = { status: { type: 'string' }, run: { type: 'string' } } as const;
  return apiCommand({ name: 'approvals', usage: USAGE, options }, deps, async (call) => {
    if (call.positionals.length > 0) throw new UsageError(`unexpected argument "${call.positionals[0]}"`);
    const status = stringFlag(call.values, 'status') ?? 'pending';
    if (!isStatus(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
    const runId = stringFlag(call.values, 'run');
    const approvals = await call.client().listApprovals({
      ...(status === 'all' ? {} : { status }),
      ...(runId === undefined ? {} : { runId }),
    });
    return printAnswer(call, approvals, () =>
      approvals.length === 0
        ? `no ${status === 'all' ? '' : `${status} `}approvals\n`
        : `${approvals.map(formatApproval).join('\n\n')}\n`,
    );
  });
}

export const run: CommandRun = createApprovalsCommand();

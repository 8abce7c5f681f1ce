/**
 * `cairn approve <approvalId> [--reject] [--comment text] [--output json] [--json]`: decides an approval. Without
 * flags it approves; `--reject` rejects; `--output` approves with a corrected output (an edit, checked against
 * the step's outputSchema by the API). Exactly one decision counts: a second one is refused (409), so is a
 * decision after the deadline (410). Exit codes: 0 decided; 1 refused by the API; 2 bad usage.
 */
import type { Decision } from '../../api/client.ts';
import { parseStrictJson } from '../../plan/json.ts';
import { type CommandRun, UsageError } from '../io.ts';
import { apiCommand, type CliDeps, CONNECTION_HELP, oneId, printLine, stringFlag } from './api-command.ts';

const USAGE = `usage: cairn approve <approvalId> [options]

  --reject                  reject instead of approving (the step fails; what depends on it is blocked)
  --output <json>           approve with this corrected output (an edit; must match the step's outputSchema)
  --comment <text>          a note recorded with the decision
  --json                    print the decided approval as JSON
${CONNECTION_HELP}

exit codes: 0 decided; 1 refused by the API (already decided: 409, expired: 410, bad output: 422); 2 bad usage
`;

function decisionOf(values: Readonly<Record<string, string | boolean | undefined>>): Decision {
  const outputText = stringFlag(values, 'output');
  const comment = stringFlag(values, 'comment');
  if (values.reject && outputText !== undefined) throw new UsageError('--reject takes no --output');
  let output: unknown;
  if (outputText !== undefined) {
    const parsed = parseStrictJson(outputText);
    if (!parsed.ok) throw new UsageError(`--output must be JSON: ${parsed.issue.message}`);
    output = parsed.value;
  }
  const decision = values.reject ? 'reject' : outputText !== undefined ? 'edit' : 'approve';
  return {
    decision,
    ...(output === undefined ? {} : { output }),
    ...(comment === undefined ? {} : { comment }),
  };
}

const PAST: Record<Decision['decision'], string> = { approve: 'approved', reject: 'rejected', edit: 'edited' };

export function createApproveCommand(deps: CliDeps = {}): CommandRun {
  const options = { reject: { type: 'boolean' }, output: { type: 'string' }, comment: { type: 'string' } } as const;
  return apiCommand({ name: 'approve', usage: USAGE, options }, deps, async (call) => {
    const approvalId = oneId(call.positionals, 'missing the approval id (see `cairn approvals`)', 'approval id');
    const decision = decisionOf(call.values);
    const approval = await call.client().decide(approvalId, decision);
    return printLine(call, approval, () => {
      const by = approval.decidedBy === undefined ? '' : ` by ${approval.decidedBy}`;
      return `approval ${approval.approvalId} ${PAST[decision.decision]}${by} (run ${approval.runId}, step ${approval.stepId})`;
    });
  });
}

export const run: CommandRun = createApproveCommand();

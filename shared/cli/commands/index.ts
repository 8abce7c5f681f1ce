/** Every `cairn` command: its one-line summary, and its module, loaded only when it runs. */
import type { CommandEntry } from '../io.ts';

export type { CommandEntry } from '../io.ts';

// Commands load lazily so `cairn validate` does not pay for the AWS SDK or the HTTP client.
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  validate: { summary: 'validate a plan file against a catalog', load: () => import('./validate.ts') },
  plan: { summary: 'plan an objective and print the plan JSON', load: () => import('./plan.ts') },
  schema: { summary: 'print the plan JSON Schema', load: () => import('./schema.ts') },
  run: { summary: 'start a run through the API (--watch follows it)', load: () => import('./run.ts') },
  runs: { summary: 'list runs, newest first (--status, --all)', load: () => import('./runs.ts') },
  status: { summary: "show a run's status and steps (--watch follows it)", load: () => import('./status.ts') },
  step: { summary: 'show one step whole: record, attempts, approvals', load: () => import('./step.ts') },
  events: { summary: "print a run's audit log (--follow until it finishes)", load: () => import('./events.ts') },
  cancel: { summary: 'cancel a run (--compensate undoes its segments)', load: () => import('./cancel.ts') },
  approvals: { summary: 'list the approvals waiting for a person', load: () => import('./approvals.ts') },
  approve: { summary: 'approve, reject or edit an approval', load: () => import('./approve.ts') },
  replan: { summary: "replan a run's failed step (--reason)", load: () => import('./replan.ts') },
  budget: {
    summary: "raise a paused run's budget or replan limit (it goes on)",
    load: () => import('./budget.ts'),
  },
  invalidate: {
    summary: 'invalidate a step and what depends on it (a new generation; a finished run reopens)',
    load: () => import('./invalidate.ts'),
  },
  webhook: {
    summary: 'sign a webhook body (Standard Webhooks), or make a whsec_ secret',
    load: () => import('./webhook.ts'),
  },
  catalog: {
    summary: "import catalog entries and bindings from an MCP server's tools (import --mcp)",
    load: () => import('./catalog.ts'),
  },
  completion: {
    summary: 'print a shell completion script (bash, zsh or fish)',
    load: async () => {
      const { completionCommand } = await import('./completion.ts');
      return { run: completionCommand(COMMANDS) };
    },
  },
};

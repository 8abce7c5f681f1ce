import { type CliIo, type CommandRun, EXIT_USAGE, processIo } from './io.ts';

// Commands load lazily so `cairn validate` does not pay for the AWS SDK or the HTTP client.
const COMMANDS: Record<string, { summary: string; load: () => Promise<{ run: CommandRun }> }> = {
  validate: { summary: 'validate a plan file against a catalog', load: () => import('./commands/validate.ts') },
  plan: { summary: 'plan an objective and print the plan JSON', load: () => import('./commands/plan.ts') },
  schema: { summary: 'print the plan JSON Schema', load: () => import('./commands/schema.ts') },
  run: { summary: 'start a run through the API (--watch follows it)', load: () => import('./commands/run.ts') },
  status: { summary: "show a run's status and steps (--watch follows it)", load: () => import('./commands/status.ts') },
  approvals: { summary: 'list the approvals waiting for a person', load: () => import('./commands/approvals.ts') },
  approve: { summary: 'approve, reject or edit an approval', load: () => import('./commands/approve.ts') },
  replan: { summary: "replan a run's failed step (--reason)", load: () => import('./commands/replan.ts') },
  invalidate: {
    summary: 'invalidate a step and what depends on it (a new generation; a finished run reopens)',
    load: () => import('./commands/invalidate.ts'),
  },
  webhook: { summary: 'sign a webhook body for curl and tests', load: () => import('./commands/webhook.ts') },
  catalog: {
    summary: "import catalog entries and bindings from an MCP server's tools (import --mcp)",
    load: () => import('./commands/catalog.ts'),
  },
};

const usage = (): string =>
  [
    'usage: cairn <command> [options]',
    '',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`),
    '',
    'Run `cairn <command> --help` for the options of one command.',
    '',
  ].join('\n');

export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage());
    return name === undefined ? EXIT_USAGE : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(`cairn: unknown command "${name}"\n\n${usage()}`);
    return EXIT_USAGE;
  }
  const { run } = await command.load();
  return run(rest, io);
}

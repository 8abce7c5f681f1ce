/**
 * `npm run chaos`: randomized plans under faults on the embedded stack, invariants checked after each run (see
 * runner.ts and invariants/). Prints counts and every violation; exits 1 on any violation or run it could not
 * drive, 2 on a bad command line.
 */

import { writeFileSync } from 'node:fs';
import { parseCommandLine, USAGE, UsageError } from './options.ts';
import { formatReport } from './report.ts';
import { runChaos } from './runner.ts';

// As bin/start.js does: the SDK's clients are made after this line (a Node-version warning is noise in a report).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<number> {
  let command: ReturnType<typeof parseCommandLine>;
  try {
    command = parseCommandLine(process.argv.slice(2), () => Math.floor(Math.random() * 2 ** 31));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`chaos: ${error.message}\n${USAGE}`);
    return 2;
  }
  if (command.help) {
    console.log(USAGE);
    return 0;
  }
  const { options } = command;
  console.log(
    `chaos: seed ${options.seed}, ${options.only?.length ?? options.runs} run(s), faults ${options.faults || 'none'}`,
  );
  const result = await runChaos({
    ...options,
    ...(command.verbose ? { log: (line: string) => console.log(line) } : {}),
  });
  for (const line of formatReport(options, result)) console.log(line);
  if (command.dump !== undefined) {
    const failing = new Set([...result.violations].map((v) => v.runId));
    const runs = result.runs
      .filter((run) => failing.has(run.runId))
      .map((run) => ({
        ...run,
        plan: result.plans.get(run.runId),
        acted: result.acted.get(run.runId),
        records: result.records.get(run.runId),
      }));
    writeFileSync(command.dump, `${JSON.stringify({ options, violations: result.violations, runs }, null, 2)}\n`);
    console.log(`chaos: ${runs.length} run(s) with a violation written to ${command.dump}`);
  }
  return result.violations.length > 0 || result.errors.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`chaos: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);

/**
 * `npm start [-- options]`: boots the embedded stack, prints the API URL and token, runs the demo objective with live
 * progress, and keeps serving until interrupted.
 */
import { parseArgs } from 'node:util';
import { startLocalStack } from './boot.ts';
import { createProgressPrinter } from './progress.ts';

const DEMO_OBJECTIVE = 'Compile a competitor research report on Acme and Globex';
/** The demo takes the primary search provider down, so its run shows a replan onto the catalog alternative. */
const DEMO_OUTAGE = 'tool:web.search';

const HELP = `usage: npm start -- [options]

  --port N                 port of the HTTP API (default 3000; 0 picks a free one)
  --host H                 interface to listen on (default 127.0.0.1)
  --no-demo                do not run the demo objective (nor its simulated search outage)
  --conformance            also register the conformance capability pack
  --max-steps N            plan limit: steps (default 64; env CAIRN_MAX_STEPS)
  --max-depth N            plan limit: depth (default 16; env CAIRN_MAX_DEPTH)
  --max-replans N          replans per run (default 3; env CAIRN_MAX_REPLANS)
  --run-deadline-seconds N run deadline (default 86400; env CAIRN_RUN_DEADLINE_SECONDS)
  --quiet                  no progress lines

The API token is CAIRN_API_TOKEN, or a random one printed at start.
`;

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

export async function main(argv: readonly string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'no-demo': { type: 'boolean' },
        conformance: { type: 'boolean' },
        'max-steps': { type: 'string' },
        'max-depth': { type: 'string' },
        'max-replans': { type: 'string' },
        'run-deadline-seconds': { type: 'string' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const env = process.env;
  let options: Parameters<typeof startLocalStack>[0];
  try {
    options = {
      port: positiveInt('--port', values.port as string | undefined, 3000),
      host: (values.host as string | undefined) ?? '127.0.0.1',
      token: env.CAIRN_API_TOKEN || undefined,
      conformance: values.conformance === true,
      ...(values['no-demo'] ? {} : { demoOutage: new Set([DEMO_OUTAGE]) }),
      limits: {
        maxSteps: positiveInt('--max-steps', (values['max-steps'] as string | undefined) ?? env.CAIRN_MAX_STEPS, 64),
        maxDepth: positiveInt('--max-depth', (values['max-depth'] as string | undefined) ?? env.CAIRN_MAX_DEPTH, 16),
        maxReplans: positiveInt(
          '--max-replans',
          (values['max-replans'] as string | undefined) ?? env.CAIRN_MAX_REPLANS,
          3,
        ),
        runDeadlineSeconds: positiveInt(
          '--run-deadline-seconds',
          (values['run-deadline-seconds'] as string | undefined) ?? env.CAIRN_RUN_DEADLINE_SECONDS,
          86_400,
        ),
      },
    };
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }

  const out = (line: string) => process.stdout.write(`${line}\n`);
  out('cairn: starting the embedded stack (dynalite, local Step Functions, in-process bus)…');
  const stack = await startLocalStack(options);
  out(`cairn: API   ${stack.url}`);
  out(`cairn: token ${stack.token}${options.token ? ' (from CAIRN_API_TOKEN)' : ''}`);
  out(`cairn: console ${stack.url}/console/#token=${encodeURIComponent(stack.token)}`);
  out(`cairn: try   CAIRN_API_URL=${stack.url} CAIRN_API_TOKEN=${stack.token} npx cairn status <runId>`);
  if (options.conformance) out('cairn: conformance capability pack registered');
  if (!values.quiet) stack.bus.subscribe({ source: ['cairn'] }, createProgressPrinter(out));

  if (!values['no-demo']) {
    const runId = await stack.startRun({ objective: DEMO_OBJECTIVE });
    out(`cairn: demo run ${runId}: "${DEMO_OBJECTIVE}"`);
    out(
      `cairn: demo: ${DEMO_OUTAGE} is down (a simulated outage); the replanner moves the searches to its alternative`,
    );
  }

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  out('cairn: stopping…');
  await stack.close();
  return 0;
}

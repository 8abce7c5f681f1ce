/**
 * `npm start [-- options]`: boots the embedded stack, prints the API URL and token, runs the demo objective with live
 * progress, and keeps serving until interrupted.
 */
import { parseArgs } from 'node:util';
import { isBadTokensFileError, loadTokensFile } from '../../shared/api/tokens-file.ts';
import {
  DEFAULT_LIMITS,
  DEFAULT_LOCAL_HOST,
  DEFAULT_LOCAL_PORT,
  DEFAULT_MAX_REPLANS,
  DEFAULT_RUN_DEADLINE_SECONDS,
} from '../../shared/config/defaults.ts';
import { isSettingsError, type Settings, settingsFromEnv } from '../../shared/config/settings.ts';
import { startLocalStack } from './boot.ts';
import { DataDirLockedError, DEFAULT_DATA_DIR } from './data-dir.ts';
import { isBadFaultsError, parseFaultSeed, parseFaultSpec } from './faults/spec.ts';
import { createProgressPrinter } from './progress.ts';
import { isBadQuotasError, quotaOptionsOf, watchThrottles } from './quotas/quota-flags.ts';
import { describeResumed } from './resume.ts';
import { synthCacheDirFromEnv, synthesisProgress } from './synth-cache.ts';

const DEMO_OBJECTIVE = 'Compile a competitor research report on Acme and Globex';
/** The demo takes the primary search provider down, so its run shows a replan onto the catalog alternative. */
const DEMO_OUTAGE = 'tool:web.search';

const HELP = `usage: npm start -- [options]

  --port N                 port of the HTTP API (default ${DEFAULT_LOCAL_PORT}; 0 picks a free one)
  --host H                 interface to listen on (default ${DEFAULT_LOCAL_HOST})
  --no-demo                do not run the demo objective (nor its simulated search outage)
  --conformance            also register the conformance capability pack
  --data-dir DIR           keep the store, open executions and ledger in DIR (default ${DEFAULT_DATA_DIR} in the
                           working directory); unfinished runs carry on at the next start
  --in-memory              keep nothing on disk (the data is gone when the process ends)
  --max-steps N            plan limit: steps (default ${DEFAULT_LIMITS.maxSteps}; env CAIRN_MAX_STEPS)
  --max-depth N            plan limit: depth (default ${DEFAULT_LIMITS.maxDepth}; env CAIRN_MAX_DEPTH)
  --max-replans N          replans per run (default ${DEFAULT_MAX_REPLANS}; env CAIRN_MAX_REPLANS)
  --run-deadline-seconds N run deadline (default ${DEFAULT_RUN_DEADLINE_SECONDS}; env CAIRN_RUN_DEADLINE_SECONDS)
  --model-url URL          plan with a model behind an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1
  --model NAME             ... that model (env CAIRN_MODEL_URL, CAIRN_MODEL; its key, if any: CAIRN_MODEL_API_KEY)
  --notify-url URL         POST a signed notification (Standard Webhooks, secret CAIRN_NOTIFY_SECRET) for each
                           approval requested, a reminder at 80 % of its deadline, and its outcome (env
                           CAIRN_NOTIFY_URL; several: comma-separated)
  --faults SPEC            inject faults: point:fault@probability,... e.g. store.write:throttle@0.03 (env
                           CAIRN_FAULTS; the points and faults: docs/faults-and-chaos.md)
  --faults-seed N          seed of the faults' choices, to repeat a run (env CAIRN_FAULTS_SEED; default random, printed)
  --tokens FILE            who may call the API: a JSON array of { "token", "subject", "roles": [...] } (roles
                           viewer, operator, approver, admin; optional "groups", "tenant"; env CAIRN_TOKENS_FILE);
                           without it, one admin token (CAIRN_API_TOKEN, or a random one printed at start)
  --aws-quotas             enforce the account's AWS quotas with AWS's numbers and errors: Lambda concurrency 1,000,
                           StartExecution bucket 1,300 refilled 300/s, DynamoDB 1,000 write / 3,000 read units/s per
                           partition key, the API's 29 s (env CAIRN_AWS_QUOTAS=1; docs/embedded.md)
  --lambda-concurrency N   ... with the account's Lambda concurrency at N (implies --aws-quotas; env
                           CAIRN_LAMBDA_CONCURRENCY)
  --sfn-start-rate N       ... with StartExecution refilled N a second, its bucket in AWS's proportion (N × 13/3;
                           implies --aws-quotas; env CAIRN_SFN_START_RATE)
  --quiet                  no progress lines

The other settings are read from the environment by the Lambdas' names (CAIRN_TRACE_RETENTION,
CAIRN_RETRY_BASE_SECONDS, CAIRN_WEBHOOK_SECRETS, ...). The API token is CAIRN_API_TOKEN, or a random one printed
at start. The synthesized state machines are cached in .cairn/cache (CAIRN_SYNTH_CACHE_DIR: another directory,
or off).
`;

/** The flags that set a setting, by the variable they stand for (a flag wins over the environment). */
const SETTING_FLAGS = {
  'max-steps': 'CAIRN_MAX_STEPS',
  'max-depth': 'CAIRN_MAX_DEPTH',
  'max-replans': 'CAIRN_MAX_REPLANS',
  'run-deadline-seconds': 'CAIRN_RUN_DEADLINE_SECONDS',
  'model-url': 'CAIRN_MODEL_URL',
  model: 'CAIRN_MODEL',
  'notify-url': 'CAIRN_NOTIFY_URL',
  tokens: 'CAIRN_TOKENS_FILE',
} as const;

function port(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_LOCAL_PORT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--port must be a non-negative integer, got "${raw}"`);
  return n;
}

/** The settings from the environment with the flags over it; an error names the flag when a flag gave the value. */
function settingsOf(values: Record<string, string | boolean | undefined>): Settings {
  const env: Record<string, string | undefined> = { ...process.env };
  const flagOf = new Map<string, string>();
  for (const [flag, variable] of Object.entries(SETTING_FLAGS)) {
    const value = values[flag];
    if (typeof value !== 'string') continue;
    env[variable] = value;
    flagOf.set(variable, `--${flag}`);
  }
  try {
    return settingsFromEnv(env);
  } catch (error) {
    if (!isSettingsError(error)) throw error;
    let message = error.message;
    for (const [variable, flag] of flagOf) message = message.replaceAll(variable, `${flag} (${variable})`);
    throw new Error(message);
  }
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
        'data-dir': { type: 'string' },
        'in-memory': { type: 'boolean' },
        'max-steps': { type: 'string' },
        'max-depth': { type: 'string' },
        'max-replans': { type: 'string' },
        'run-deadline-seconds': { type: 'string' },
        'model-url': { type: 'string' },
        model: { type: 'string' },
        'notify-url': { type: 'string' },
        faults: { type: 'string' },
        'faults-seed': { type: 'string' },
        tokens: { type: 'string' },
        'aws-quotas': { type: 'boolean' },
        'lambda-concurrency': { type: 'string' },
        'sfn-start-rate': { type: 'string' },
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
  let options: Parameters<typeof startLocalStack>[0];
  try {
    const host = values.host as string | undefined;
    const dataDir = values['data-dir'] as string | undefined;
    if (values['in-memory'] && dataDir !== undefined) throw new Error('--in-memory and --data-dir exclude each other');
    if (dataDir === '') throw new Error('--data-dir needs a directory');
    const faults = values.faults as string | undefined;
    const faultsSeed = values['faults-seed'] as string | undefined;
    if (faults !== undefined) parseFaultSpec(faults);
    const settings = settingsOf(values);
    // Checked before anything boots, as a fault spec is: a bad tokens file (E_BAD_TOKENS_FILE) never starts a stack.
    if (settings.apiTokensFile !== undefined) loadTokensFile(settings.apiTokensFile);
    const awsQuotas = quotaOptionsOf(values, process.env);
    options = {
      ...(values['in-memory'] ? {} : { dataDir: dataDir ?? DEFAULT_DATA_DIR }),
      port: port(values.port as string | undefined),
      ...(host === undefined ? {} : { host }),
      settings,
      conformance: values.conformance === true,
      ...(values['no-demo'] ? {} : { demoOutage: new Set([DEMO_OUTAGE]) }),
      synthCacheDir: synthCacheDirFromEnv(process.env, dataDir ?? DEFAULT_DATA_DIR),
      onSynthesize: (reason) => process.stdout.write(`${synthesisProgress(reason)}\n`),
      ...(faults === undefined ? {} : { faults }),
      ...(faultsSeed === undefined ? {} : { faultsSeed: parseFaultSeed(faultsSeed, '--faults-seed') }),
      awsQuotas,
    };
  } catch (error) {
    const code = isBadFaultsError(error)
      ? 'E_BAD_FAULTS: '
      : isBadTokensFileError(error)
        ? 'E_BAD_TOKENS_FILE: '
        : isBadQuotasError(error)
          ? 'E_BAD_QUOTAS: '
          : '';
    process.stderr.write(`${code === '' ? '' : `cairn: ${code}`}${(error as Error).message}\n`);
    return 2;
  }

  const out = (line: string) => process.stdout.write(`${line}\n`);
  out('cairn: starting the embedded stack (dynalite, local Step Functions, in-process bus)…');
  let stack: Awaited<ReturnType<typeof startLocalStack>>;
  try {
    stack = await startLocalStack(options);
  } catch (error) {
    if (isBadFaultsError(error) || isBadTokensFileError(error)) {
      process.stderr.write(`cairn: ${error.name}: ${error.message}\n`);
      return 2;
    }
    if (!(error instanceof DataDirLockedError)) throw error;
    process.stderr.write(`cairn: ${error.name}: ${error.message}\n`);
    return 1;
  }
  if (stack.synthesis.kind === 'synthesized' && stack.synthesis.detail) out(`cairn: ${stack.synthesis.detail}`);
  out(`cairn: API   ${stack.url}`);
  if (stack.callers === undefined) {
    out(`cairn: token ${stack.token}${options.settings?.apiToken ? ' (from CAIRN_API_TOKEN)' : ''}`);
    out(`cairn: console ${stack.url}/console/#token=${encodeURIComponent(stack.token)}`);
    out(`cairn: try   CAIRN_API_URL=${stack.url} CAIRN_API_TOKEN=${stack.token} npx --no cairn status <runId>`);
  } else {
    // A person's token stays in the file: only who may call, and with which roles.
    const who = stack.callers.map((c) => `${c.subject} (${c.roles.join(', ') || 'no role'})`);
    out(`cairn: tokens from ${options.settings?.apiTokensFile}: ${who.join('; ')}`);
    out(`cairn: console ${stack.url}/console/`);
    out(`cairn: try   CAIRN_API_URL=${stack.url} CAIRN_API_TOKEN=<your token> npx --no cairn status <runId>`);
  }
  out(stack.dataDir ? `cairn: data  ${stack.dataDir} (kept across restarts)` : 'cairn: data  in memory (--in-memory)');
  if (options.conformance) out('cairn: conformance capability pack registered');
  const bound = Object.keys(options.settings?.capabilities.bindings ?? {});
  if (bound.length > 0)
    out(
      `cairn: CAIRN_BINDINGS binds ${bound.slice(0, 4).join(', ')}${bound.length > 4 ? ` and ${bound.length - 4} more` : ''}`,
    );
  if (options.settings?.catalog.file !== undefined)
    out(`cairn: catalog: the demo's and ${options.settings.catalog.file}`);
  const endpoint = options.settings?.plannerEndpoint;
  if (endpoint) out(`cairn: planner: model ${endpoint.model} at ${endpoint.baseUrl}`);
  const notify = options.settings?.notify.urls ?? [];
  if (notify.length > 0) out(`cairn: notify ${notify.map((u) => new URL(u).origin).join(', ')} (approvals, signed)`);
  for (const line of describeResumed(stack.resumed)) out(`cairn: ${line}`);
  if (stack.faults) out(`cairn: faults ${stack.faults.spec} (seed ${stack.faults.seed}; repeat with --faults-seed)`);
  const throttles = watchThrottles(stack, out, { quiet: values.quiet === true });
  if (!values.quiet) stack.bus.subscribe({ source: ['cairn'] }, createProgressPrinter(out));

  if (!values['no-demo']) {
    try {
      const runId = await stack.startRun({ objective: DEMO_OBJECTIVE });
      out(`cairn: demo run ${runId}: "${DEMO_OBJECTIVE}"`);
      out(
        `cairn: demo: ${DEMO_OUTAGE} is down (a simulated outage); the replanner moves the searches to its alternative`,
      );
    } catch (error) {
      // A tokens file where nobody may start runs: the stack serves on without its demo.
      out(`cairn: demo not started: ${(error as Error).message}`);
    }
  }

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  out('cairn: stopping…');
  if (stack.faults) out(`cairn: faults injected: ${JSON.stringify(stack.faults.injected())}`);
  throttles.stop();
  await stack.close();
  return 0;
}

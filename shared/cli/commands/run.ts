/**
 * `cairn run "<objective>" [--mode M] [--direct-target T] [--watch]` / `cairn run --plan <file> [--watch]`
 * Starts a run through the API (`--api`, default CAIRN_API_URL or the local stack; `--token` or CAIRN_API_TOKEN)
 * and prints its id. With `--watch` it follows the run, one line per step transition with a done/total counter.
 * Exit codes: 0 started (or, watching, complete); 1 refused by the API, or the watched run failed or was
 * cancelled; 2 bad usage or an unreadable plan file; 3 the watched run is paused, waiting for a person
 * (`cairn approvals`, `cairn approve <id>`, then `cairn status <runId> --watch`).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CreateRunBody } from '../../api/client.ts';
import { DEFAULT_POLL_MS } from '../../api/watch.ts';
import { parseStrictJson } from '../../plan/json.ts';
import { terminalJson, terminalLine } from '../../terminal-text.ts';
import { type CliIo, type CommandRun, EXIT_OK, UsageError } from '../io.ts';
import {
  API_EXIT_HELP,
  apiCommand,
  type CliDeps,
  CONNECTION_HELP,
  type Flags,
  positiveMs,
  steadyOf,
  stringFlag,
  WATCH_EXIT_HELP,
} from './api-command.ts';
import { watchToExit } from './follow.ts';

const USAGE = `usage: cairn run "<objective>" [options]
       cairn run --plan <file> [options]

  --mode DIRECT|DECOMPOSE   how the objective is planned (default: DIRECT with --direct-target, else DECOMPOSE)
  --direct-target <target>  DIRECT: the catalog target of the single step
  --plan <file>             run this plan (validated by the API as untrusted) instead of planning an objective
  --idempotency-key <key>   the same key returns the same run and starts nothing new (with another
                            objective or plan it is refused: E_IDEMPOTENCY_MISMATCH)
  --watch                   follow the run until it ends or waits for a person
  --interval <ms>           least ms between reads of the run (--watch; default ${DEFAULT_POLL_MS})
  --json                    print the API's answer as JSON (with --watch: then one JSON line per event)
${CONNECTION_HELP}

exit codes: 0 started; 1 refused by the API; 2 bad usage; ${API_EXIT_HELP}
${WATCH_EXIT_HELP}
`;

async function readPlan(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read the plan ${path}${code ? ` (${code})` : ''}`);
  }
  const parsed = parseStrictJson(text);
  if (!parsed.ok) throw new UsageError(`the plan ${path} is not valid JSON: ${parsed.issue.message}`);
  return parsed.value;
}

async function bodyOf({ values, positionals }: Flags, io: CliIo): Promise<CreateRunBody> {
  const planPath = stringFlag(values, 'plan');
  if (planPath !== undefined) {
    if (positionals.length > 0 || values.mode !== undefined || values['direct-target'] !== undefined) {
      throw new UsageError('--plan takes no objective, --mode or --direct-target: the plan says everything');
    }
    return { plan: await readPlan(resolve(io.cwd, planPath)) };
  }
  if (positionals.length === 0) throw new UsageError('missing the objective (or --plan <file>)');
  const mode = stringFlag(values, 'mode')?.toUpperCase();
  if (mode !== undefined && mode !== 'DIRECT' && mode !== 'DECOMPOSE') {
    throw new UsageError(`--mode must be DIRECT or DECOMPOSE, got "${String(values.mode)}"`);
  }
  const directTarget = stringFlag(values, 'direct-target');
  return {
    // Several words without quotes are one objective.
    objective: positionals.join(' '),
    ...(mode === undefined ? {} : { mode }),
    ...(directTarget === undefined ? {} : { directTarget }),
  };
}

export function createRunCommand(deps: CliDeps = {}): CommandRun {
  const options = {
    mode: { type: 'string' },
    'direct-target': { type: 'string' },
    plan: { type: 'string' },
    'idempotency-key': { type: 'string' },
    watch: { type: 'boolean' },
    interval: { type: 'string' },
  } as const;
  return apiCommand({ name: 'run', usage: USAGE, options }, deps, async (call) => {
    const { values, io } = call;
    const intervalMs = positiveMs(stringFlag(values, 'interval'));
    const body = await bodyOf(call, io);
    const client = call.client();
    const key = stringFlag(values, 'idempotency-key');
    const created = await client.createRun(body, key === undefined ? {} : { idempotencyKey: key });
    if (values.json) io.stdout(`${terminalJson(created)}\n`);
    else if (!values.watch) io.stdout(`${terminalLine(`run ${created.runId} ${created.status}`)}\n`);
    if (!values.watch) return EXIT_OK;
    const json = values.json === true;
    return watchToExit(client, created.runId, { io, name: 'run', json, intervalMs, ...steadyOf(deps) });
  });
}

export const run: CommandRun = createRunCommand();

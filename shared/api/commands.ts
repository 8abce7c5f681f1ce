/**
 * Cancels and invalidations that outlast the API's wait. Their command goes to the run's mailbox and the API waits
 * for the decision a bounded time (`decisionWaitMs`, 5 s by default: API Gateway gives a request 29 s); a decision
 * still to come is answered 202 with the command's id and where to read it, `GET /runs/{runId}/commands/{commandId}`,
 * which answers 202 pending until the decision is there, then what the request itself would have answered.
 *
 * The command id is the mailbox letter's id (the decider's answer is kept under it): `<kind>~<unique>~<run tag>`.
 * The kind says how to answer it; the run tag (a digest of the run id) keeps a command from being read under
 * another run; a keyed invalidation's unique part comes from its Idempotency-Key, so every retry of one request is
 * one command.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { DEFAULT_DECISION_WAIT_MS } from '../config/defaults.ts';
import type { RunCommandInput } from '../engine/run/commands.ts';
import type { Reply } from '../engine/run/decision.ts';
import { isDecisionPendingError } from '../ports/mailbox.ts';
import { requireRun } from './console/plan-lookup.ts';
import { serve } from './contract/route.ts';
import { getRunCommand } from './contract/routes/runs.ts';
import type { ApiDeps, ApiEnv } from './deps.ts';
import { answered, notFound } from './errors.ts';

export type CommandKind = 'cancel' | 'invalidate';

const digest = (text: string, chars: number): string => createHash('sha256').update(text).digest('hex').slice(0, chars);
const runTag = (runId: string): string => digest(runId, 12);

/** The id of a command to `runId`: `unique` a fresh id, or a digest of what names a request (its key). */
export const commandIdOf = (kind: CommandKind, runId: string, unique: string): string =>
  `${kind}~${unique}~${runTag(runId)}`;

/** The id of a keyed request's command: the same for every retry of it. */
export const keyedCommandId = (kind: CommandKind, runId: string, key: string): string =>
  commandIdOf(kind, runId, digest(`${runId}\n${key}`, 32));

const COMMAND_ID = /^(cancel|invalidate)~[A-Za-z0-9_.-]{1,64}~([0-9a-f]{12})$/;

/** The kind of a command id made for this run; undefined for anything else. */
export function commandKindOf(runId: string, commandId: string): CommandKind | undefined {
  const match = COMMAND_ID.exec(commandId);
  return match !== null && match[2] === runTag(runId) ? (match[1] as CommandKind) : undefined;
}

/** The decision within the API's wait, or `pending` (the command is in the mailbox and will be decided). */
export async function askWithin(
  deps: ApiDeps,
  runId: string,
  command: RunCommandInput,
  id: string,
): Promise<Reply | 'pending'> {
  try {
    return await deps.mailbox.ask(runId, command, { id, waitMs: deps.decisionWaitMs ?? DEFAULT_DECISION_WAIT_MS });
  } catch (error) {
    if (isDecisionPendingError(error)) return 'pending';
    throw error;
  }
}

/** 202: the decision is still to come, read at the Location. */
export function pendingAnswer(c: Context<ApiEnv>, runId: string, commandId: string): Response {
  const location = `/runs/${encodeURIComponent(runId)}/commands/${encodeURIComponent(commandId)}`;
  c.header('Location', location);
  c.header('Retry-After', '1');
  return c.json({ runId, commandId, decision: 'pending', location }, 202);
}

/** What a decided cancel answers: the run, cancelled or being cancelled (a refusal: its own status). */
export async function cancelAnswer(deps: ApiDeps, runId: string, reply: Reply) {
  answered(reply);
  const after = await deps.store.getRun(runId);
  return { runId, status: after?.status ?? 'cancelled' } as const;
}

/** What a decided invalidation answers: the steps that start a new generation, whether the run reopened. */
export function invalidationAnswer(runId: string, reply: Reply) {
  const value = answered(reply);
  const stepIds = Array.isArray(value.stepIds) ? (value.stepIds as string[]) : [];
  return { runId, stepIds, reopened: value.reopened === true };
}

export function commandRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  serve(app, getRunCommand, async (c) => {
    const run = await requireRun(deps.store, c.req.param('runId'));
    const commandId = c.req.param('commandId');
    const kind = commandKindOf(run.runId, commandId);
    if (kind === undefined) throw notFound(`run ${run.runId} has no command ${commandId}`);
    const reply = await deps.mailbox.answer(commandId);
    if (reply === undefined) return pendingAnswer(c, run.runId, commandId);
    if (kind === 'cancel') return c.json(await cancelAnswer(deps, run.runId, reply), 200);
    return c.json(invalidationAnswer(run.runId, reply), 202);
  });

  return app;
}

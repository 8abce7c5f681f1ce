/**
 * The shell around a run's decider: it takes a batch of the run's commands (from the run's mailbox: one batch of a
 * run at a time), stamps each with the time it was taken, decides them on its copy of the run, commits the batch with
 * one conditional write at the run's next version, writes the records the batch changed and performs its effects.
 * It decides nothing itself.
 *
 * The copy of a run stays in memory between batches (a warm Lambda, the embedded process): a batch costs what it
 * changes, not what the run holds. A commit that finds its version taken (another writer got there: a redelivery to
 * another Lambda) drops the copy, loads the run again and decides the batch again; a failure after the commit drops
 * the copy too, and whoever loads the run next finishes the batch (its records and effects, all safe to repeat).
 */
import type { RunCommand, RunCommandInput } from '../../engine/run/commands.ts';
import { decideInPlace } from '../../engine/run/decide.ts';
import { type Reply, refuse } from '../../engine/run/decision.ts';
import type { Effect } from '../../engine/run/effects.ts';
import type { RunEvent } from '../../engine/run/events.ts';
import { isImplied } from '../../engine/run/planned.ts';
import type { DraftState } from '../../engine/run/state.ts';
import { countEventMetrics, recordStepDuration } from '../../events/metrics.ts';
import type { DomainEvent } from '../../ports/events.ts';
import type { BatchHandler, Mailbox } from '../../ports/mailbox.ts';
import type { MetricsSink } from '../../ports/metrics.ts';
import type { CommittedBatch, RecordImages, RunLog } from '../../ports/run-log.ts';
import { type LoadDeps, loadRun } from './loading.ts';
import { type DeferredStarts, type PerformDeps, performEffects } from './performing.ts';

export interface RunShellDeps extends LoadDeps, PerformDeps {
  readonly store: LoadDeps['store'] & PerformDeps['store'];
  readonly runLog: RunLog;
  /** Where the starts it could not make go back to the run's decider (StartsThrottled). */
  readonly mailbox: Pick<Mailbox, 'send'>;
  /** Runs kept in memory at most (least recently used dropped first). */
  readonly cachedRuns?: number;
  /** Where the step outcomes a committed batch announced are counted (absent: nowhere). */
  readonly metrics?: MetricsSink | undefined;
}

/** Decides and commits a batch of one run's commands, in order (`handle`): the answer to each. */
export interface RunShell extends BatchHandler {
  /** Forgets the in-memory copy of a run (the next batch loads it). */
  forget(runId: string): void;
}

interface Cached {
  readonly draft: DraftState;
}

/** Deferred starts per StartsThrottled letter (a start is about 200 bytes: 40 KB a letter). */
const STARTS_PER_LETTER = 200;

/** How often a batch whose version was taken is decided again on a fresh copy before the failure stands. */
const COMMIT_TRIES = 5;

const UNKNOWN_RUN = (runId: string): Reply => refuse(404, 'E_NOT_FOUND', `run ${runId} not found`, { runId });

export function createRunShell(deps: RunShellDeps): RunShell {
  const cache = new Map<string, Cached>();
  const limit = deps.cachedRuns ?? 1000;

  const remember = (runId: string, entry: Cached): void => {
    cache.delete(runId);
    cache.set(runId, entry);
    if (cache.size > limit) cache.delete(cache.keys().next().value as string);
  };

  /**
   * Performs a committed batch's effects; the starts it could not make go to the run's decider, which defers them
   * (the batch is done: only a failure to tell the decider fails it, and then it is performed again).
   */
  const perform = async (runId: string, effects: readonly Effect[]): Promise<void> => {
    const deferred: DeferredStarts = await performEffects(deps, runId, effects);
    for (const [retry, starts] of deferred) {
      const retryAfterSeconds = deps.pacer?.secondsFor(starts.length) ?? 0;
      // In letters of a bounded size: a queue's message, and the timer that carries them back, hold 256 KB.
      for (let from = 0; from < starts.length; from += STARTS_PER_LETTER) {
        const letter = starts.slice(from, from + STARTS_PER_LETTER);
        await deps.mailbox.send(runId, { kind: 'StartsThrottled', starts: letter, retry, retryAfterSeconds });
      }
    }
  };

  const copyOf = async (runId: string): Promise<Cached | undefined> => {
    const known = cache.get(runId);
    if (known !== undefined) return known;
    const loaded = await loadRun(deps, runId);
    if (loaded === undefined) return undefined;
    // The batch a writer committed and did not finish: its records were written again by loadRun, its effects now.
    if (loaded.last !== undefined) await perform(runId, loaded.last.effects);
    const entry = { draft: loaded.draft };
    remember(runId, entry);
    return entry;
  };

  async function once(runId: string, commands: readonly RunCommandInput[]): Promise<Reply[] | 'taken'> {
    const entry = await copyOf(runId);
    if (entry === undefined) return commands.map(() => UNKNOWN_RUN(runId));
    const { draft } = entry;
    const at = deps.clock().toISOString();
    const events: RunEvent[] = [];
    const effects: Effect[] = [];
    const published: DomainEvent[] = [];
    const replies: Reply[] = [];
    const runBefore = draft.run;
    try {
      for (const input of commands) {
        const decided = decideInPlace(draft, { ...input, at } as RunCommand);
        events.push(...decided.events);
        effects.push(...decided.effects);
        published.push(...decided.published);
        replies.push(decided.reply);
      }
    } catch (error) {
      // A rule that throws has left the copy half changed: it is dropped, and the batch fails as a whole.
      cache.delete(runId);
      throw error;
    }
    if (events.length === 0) {
      // No commit checks a batch that decided nothing, so the copy is checked against the log: another shell may
      // have committed since it was kept, or since it was loaded (loading performs the last batch's effects, which
      // may wait on the start pacer), and an answer from the past would drop what the batch was sent.
      if (((await deps.runLog.last(runId))?.version ?? 0) !== draft.version) {
        cache.delete(runId);
        return 'taken';
      }
      return replies;
    }
    const batch: CommittedBatch = {
      runId,
      version: draft.version + 1,
      at,
      events,
      images: imagesOf(draft, events, runBefore),
      effects,
      published,
      counts: { ...draft.counts },
    };
    try {
      if (!(await deps.runLog.commit(batch))) {
        cache.delete(runId);
        return 'taken';
      }
      draft.version = batch.version;
      if (deps.metrics !== undefined) countBatch(deps.metrics, draft, published);
      await deps.runLog.project(batch);
      await perform(runId, effects);
    } catch (error) {
      cache.delete(runId);
      throw error;
    }
    return replies;
  }

  return {
    async handle(runId, commands) {
      for (let tries = 1; ; tries++) {
        const replies = await once(runId, commands);
        if (replies !== 'taken') return replies;
        if (tries >= COMMIT_TRIES) throw new Error(`run ${runId}: its version kept being taken by another writer`);
      }
    },
    forget(runId) {
      cache.delete(runId);
    },
  };
}

/**
 * The records a batch changed, as they are after it: those its events name. A dependent whose count of what it waits
 * for changed is not among them: readers derive that count (shared/engine/run/releases.ts), so a join is written
 * when it starts, not on each of its parents' releases. The steps a run's start makes are not written: their plan
 * implies them (shared/engine/run/planned.ts) until an event changes them.
 */
function imagesOf(draft: DraftState, events: readonly RunEvent[], runBefore: DraftState['run']): RecordImages {
  const steps = new Set<string>();
  const moved = new Set<string>();
  const approvals = new Set<string>();
  const revisions: { plan: RunEvent & { type: 'RunStarted' | 'PlanRevised' } }[] = [];
  for (const event of events) {
    if ('stepId' in event && typeof event.stepId === 'string') steps.add(event.stepId);
    if (event.type === 'StepMoved') moved.add(event.stepId);
    if ('approvalId' in event) approvals.add(event.approvalId);
    if (event.type === 'ApprovalRequested' || event.type === 'RevisionHeld') approvals.add(event.approval.approvalId);
    // A later revision implies nothing (planned.ts): the steps its start still implied are written with it.
    if (event.type === 'PlanRevised')
      for (const [id, step] of draft.steps) if (isImplied(draft.run, step)) steps.add(id);
    if (event.type === 'RunStarted' || event.type === 'PlanRevised') revisions.push({ plan: event });
  }
  return {
    ...(draft.run === runBefore ? {} : { run: draft.run }),
    steps: [...steps].flatMap((id) => draft.steps.get(id) ?? []),
    moved: [...moved],
    approvals: [...approvals].flatMap((id) => draft.approvals.get(id) ?? []),
    revisions: revisions.map(({ plan: event }) => ({
      plan: event.plan,
      reason: event.type === 'PlanRevised' ? event.reason : 'initial plan',
    })),
  };
}

/**
 * The metrics of a committed batch, from what it announced (counted once, by the writer that committed it): step
 * outcomes per capability, retries, blocks, replans and invalidations, and a finished step's duration.
 */
function countBatch(sink: MetricsSink, draft: DraftState, published: readonly DomainEvent[]): void {
  const targetOf = (stepId: string) => draft.plan?.byId.get(stepId)?.target ?? undefined;
  countEventMetrics(
    sink,
    published.map((event) => ({ type: event.detailType, detail: event.detail })),
    targetOf,
  );
  for (const event of published) {
    const stepId = event.detail.stepId;
    if (typeof stepId !== 'string') continue;
    const outcome =
      event.detailType === 'StepSucceeded'
        ? 'succeeded'
        : event.detailType === 'StepFailed' && event.detail.final !== false
          ? 'failed'
          : undefined;
    const step = draft.steps.get(stepId);
    if (outcome !== undefined && step !== undefined) recordStepDuration(sink, step, targetOf(stepId), outcome);
  }
}

/**
 * A run as its pages see it, kept current quietly. The run (every step) is read once, conditionally; after that the
 * feed's events say what moved, and a step's new status is taken from its event instead of reading 2,000 steps
 * again. What events cannot say exactly (a new revision, an invalidation, a reopened or finished run, an event
 * type this page does not know) reads the run again, conditionally, at most every RELOAD_MS while it is live: only
 * the pages that changed are downloaded. The run's head (status, spend) is asked for every QUIET_MS with the ETag
 * of the last answer. A live run is followed on the event feed (a long poll); a paused or finished one every QUIET_MS.
 */
import { getConditional, getRun } from '../api.js';
import { aggregateStatus, groupParents } from '../dag/collapse.js';
import { TERMINAL_RUN } from '../poll.js';
import { QUIET_MS, runFeed } from './run-feed.js';

const RELOAD_MS = 10_000;

/** A step's status after its event; `undefined` for events that say nothing about one step's status. */
function statusAfter(event) {
  const d = event.detail ?? {};
  switch (event.type) {
    case 'StepStarted':
      return 'running';
    case 'StepRetrying':
      return 'retrying';
    case 'StepSucceeded':
      return 'succeeded';
    case 'StepFailed':
      return d.final === false ? 'retrying' : 'failed';
    case 'StepSkipped':
      return 'skipped';
    case 'StepBlocked':
      return 'blocked';
    case 'StepCompensation':
      return d.state;
    case 'ApprovalRequested':
      return d.kind === 'revision' ? undefined : 'awaiting_approval';
    default:
      return undefined;
  }
}

/** Events that change nothing the run's steps show, or only its head (read by the heartbeat). */
const HEAD_ONLY = new Set([
  'ApprovalDecided',
  'ApprovalClosed',
  'BudgetThreshold',
  'BudgetExhausted',
  'BudgetWarned',
  'UsageCounted',
  'CancelBegun',
  'ReplanAsked',
  'ReplanDeclined',
  'RevisionHeld',
]);

const isLive = (run) => run && !TERMINAL_RUN.has(run.status) && run.status !== 'paused';

/** Group statuses from their leaves, as the server derives them, after statuses changed locally. */
function regroup(steps) {
  const parentOf = groupParents(steps);
  const counts = new Map();
  for (const step of steps) {
    if (step.target === null) continue;
    for (let at = parentOf.get(step.id), hops = 0; at !== undefined && hops <= steps.length; hops++) {
      const tally = counts.get(at) ?? {};
      tally[step.status] = (tally[step.status] ?? 0) + 1;
      counts.set(at, tally);
      at = parentOf.get(at);
    }
  }
  steps.forEach((step, index) => {
    if (step.target !== null) return;
    const status = aggregateStatus(counts.get(step.id) ?? {});
    if (status !== step.status) steps[index] = { ...step, status };
  });
}

/**
 * `onChange({ run, events, reason, stepIds })` after every change: `reason` is 'load', 'events' (stepIds moved)
 * or 'head'. `events` is the run's audit log so far (the Events view reads it).
 */
export function runSession(runId, { onChange, onError }) {
  let run;
  /** Each step's place in run.steps: a step that moves is replaced by a copy, never changed in place. */
  let byId = new Map();
  const events = [];
  let stopped = false;
  let dirty = false;
  let lastReload = 0;
  let lastHead = 0;

  const emit = (reason, stepIds = []) => {
    if (!stopped) onChange({ run, events, reason, stepIds });
  };

  async function reload() {
    dirty = false;
    lastReload = Date.now();
    const { run: next, changed } = await getRun(runId);
    if (stopped) return;
    const first = run === undefined;
    run = next;
    byId = new Map(run.steps.map((step, index) => [step.id, index]));
    feed.setCadence(isLive(run) ? 'live' : 'quiet');
    if (changed || first) emit('load');
  }

  async function head() {
    lastHead = Date.now();
    const { json, changed } = await getConditional(`/runs/${encodeURIComponent(runId)}?limit=1`);
    if (stopped || !changed || !run) return;
    if (json.revision !== run.revision) {
      dirty = true;
      return;
    }
    const { steps: _one, nextCursor: _next, ...fields } = json;
    run = { ...run, ...fields, steps: run.steps };
    if (!('terminal' in fields)) delete run.terminal;
    if (!('cancelling' in fields)) delete run.cancelling;
    feed.setCadence(isLive(run) ? 'live' : 'quiet');
    emit('head');
  }

  function apply(batch, { history }) {
    events.push(...batch);
    if (history || !run) return;
    const moved = new Set();
    for (const event of batch) {
      const status = statusAfter(event);
      const index = event.stepId ? byId.get(event.stepId) : undefined;
      if (status && index !== undefined) {
        const step = { ...run.steps[index], status };
        if (event.detail?.generation) step.generation = event.detail.generation;
        const attempts = event.detail?.attempt ?? event.detail?.attempts;
        if (typeof attempts === 'number') step.attempts = attempts;
        run.steps[index] = step;
        moved.add(step.id);
      } else if (!HEAD_ONLY.has(event.type)) {
        dirty = true;
      }
    }
    if (moved.size > 0) {
      if (run.steps.some((step) => step.target === null)) regroup(run.steps);
      emit('events', [...moved]);
    } else if (batch.length > 0) {
      emit('events', []);
    }
  }

  const feed = runFeed(runId, {
    onEvents: apply,
    async onTick() {
      const now = Date.now();
      if (dirty && (!isLive(run) || now - lastReload >= RELOAD_MS)) await reload();
      else if (now - lastHead >= QUIET_MS - 50) await head();
    },
  });

  return {
    get run() {
      return run;
    },
    events,
    async open() {
      // The log may fail to read (it is the run's history, not the run): the run is shown all the same.
      await feed.start().catch(() => undefined);
      try {
        await reload();
      } catch (error) {
        onError?.(error);
      }
    },
    /** After the page's own action: read the run again now and follow the feed from here. */
    async refresh() {
      await reload();
      feed.now();
    },
    stop() {
      stopped = true;
      feed.stop();
    },
  };
}

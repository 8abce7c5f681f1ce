/**
 * What the simulation keeps of each run while it runs: the batches its log committed (each replayed on a replica of
 * the run as it commits: the event-sourcing law, checks/event-sourcing.ts), every answer the decider gave a sender
 * who asked, what the simulated executions did (attempts, ledger writes, undos), and the problems found on the way.
 * Listeners hear of each committed batch (the replanner, a person, the client act on what they are told).
 */
import { createHash, type Hash } from 'node:crypto';
import type { RunCommandInput } from '../../shared/engine/run/commands.ts';
import type { Reply } from '../../shared/engine/run/decision.ts';
import { type DraftState, draftOf, type PlanView, type RunSettings } from '../../shared/engine/run/state.ts';
import type { Plan } from '../../shared/plan/schema.ts';
import type { RunRecord } from '../../shared/ports/records/runs.ts';
import type { CommittedBatch } from '../../shared/ports/run-log.ts';
import { replayBatch } from './checks/event-sourcing.ts';
import type { SimPlan } from './plans.ts';

export interface AnsweredCommand {
  readonly command: RunCommandInput;
  /** Undefined when the sender was told of a failure instead (the mailbox gave up on its batch). */
  readonly reply: Reply | undefined;
  readonly askedAt: number;
  readonly answeredAt: number;
  /** The run's last committed version when the answer came: what the answer was decided on or before. */
  readonly version: number;
}

export interface AttemptMade {
  readonly stepId: string;
  readonly generation: number;
  readonly attempt: number;
  readonly outcome: 'succeeded' | 'failed' | 'held';
  readonly execution: string;
}

export interface Problem {
  readonly invariant: string;
  readonly detail: string;
}

export interface SimRun {
  readonly runId: string;
  readonly index: number;
  readonly sim: SimPlan;
  readonly createdAt: number;
  /** The run as its committed events make it (evolve), batch after batch. */
  readonly replica: DraftState;
  readonly batches: CommittedBatch[];
  readonly answers: AnsweredCommand[];
  readonly attempts: AttemptMade[];
  /** Conformance ledger entries: a mutating step's success acted on the outside world. */
  readonly ledger: { stepId: string; generation: number; attempt: number; at: string; entryId: string }[];
  /** Compensations that undid a step's effect (`~undo~` executions that succeeded). */
  readonly undos: { stepId: string; generation: number; round: number; execution: string }[];
  readonly problems: Problem[];
}

export type CommitListener = (run: SimRun, batch: CommittedBatch) => void;

export class Recorder {
  readonly runs = new Map<string, SimRun>();
  /** How often each path was taken (event types, answers, taken versions): what `--coverage` sums up. */
  readonly tallies = new Map<string, number>();
  private readonly listeners: CommitListener[] = [];
  private readonly hash: Hash | undefined;

  constructor(options: { readonly trace: boolean }) {
    this.hash = options.trace ? createHash('sha256') : undefined;
  }

  startRun(input: {
    run: RunRecord;
    index: number;
    sim: SimPlan;
    createdAt: number;
    settings: RunSettings;
    viewOf: (plan: Plan) => PlanView;
  }): SimRun {
    const { run, settings, viewOf } = input;
    const replica = draftOf({ version: 0, run, steps: new Map(), approvals: new Map(), settings, viewOf });
    const sim: SimRun = {
      runId: run.runId,
      index: input.index,
      sim: input.sim,
      createdAt: input.createdAt,
      replica,
      batches: [],
      answers: [],
      attempts: [],
      ledger: [],
      undos: [],
      problems: [],
    };
    this.runs.set(run.runId, sim);
    return sim;
  }

  onCommit(listener: CommitListener): void {
    this.listeners.push(listener);
  }

  /** A batch the run's log took (whether or not its writer heard so). */
  committed(batch: CommittedBatch): void {
    const run = this.runs.get(batch.runId);
    if (run === undefined) return;
    run.batches.push(batch);
    for (const event of batch.events) this.tally(`event: ${event.type}`);
    this.hash?.update(JSON.stringify({ runId: batch.runId, version: batch.version, events: batch.events }));
    // After the first divergence every later batch would differ too: one problem says it.
    if (!run.problems.some((p) => p.invariant === 'event-sourcing'))
      for (const detail of replayBatch(run.replica, batch))
        run.problems.push({ invariant: 'event-sourcing', detail: `v${batch.version}: ${detail}` });
    for (const listener of this.listeners) listener(run, batch);
  }

  tally(what: string): void {
    this.tallies.set(what, (this.tallies.get(what) ?? 0) + 1);
  }

  answered(runId: string, entry: Omit<AnsweredCommand, 'version'>): void {
    const { command, reply } = entry;
    this.tally(
      `answer: ${command.kind} ${reply === undefined ? 'none' : reply.ok ? 'OK' : `${reply.status} ${reply.code}`}`,
    );
    const run = this.runs.get(runId);
    if (run !== undefined) run.answers.push({ ...entry, version: run.batches.at(-1)?.version ?? 0 });
  }

  problem(runId: string, invariant: string, detail: string): void {
    this.runs.get(runId)?.problems.push({ invariant, detail });
  }

  run(runId: string): SimRun | undefined {
    return this.runs.get(runId);
  }

  /** The sha256 of every committed batch's events, in commit order (with `trace` on). */
  traceHash(): string | undefined {
    return this.hash?.digest('hex');
  }
}

/**
 * The simulated platform as the actors meet it. Step Functions: an execution started under a name runs once (a
 * second start of the name is no new execution, as the deterministic names promise), stopping one ends its wait and
 * its later moves; a task token's wait lasts at most its timeout, and answering a token that is no longer open is
 * refused as Step Functions refuses it (TaskTimedOut), which the shell takes as the wait having moved on. The timers:
 * one per name, each delivering its command to the run's mailbox at its time. And what every actor (an execution,
 * a person, the client, the replanner) works with, and how it speaks to a run: through its mailbox, an execution's
 * word under the Lambda fault that makes a Task's word arrive twice (its answer was lost, the Task ran again).
 */
import type { MemoryStorePort } from '../../../shared/adapters/memory/store.ts';
import type { RunCommand, RunCommandInput } from '../../../shared/engine/run/commands.ts';
import type { Reply } from '../../../shared/engine/run/decision.ts';
import type { RunSettings } from '../../../shared/engine/run/state.ts';
import { ConflictError } from '../../../shared/errors.ts';
import type { Executions, MachineName, StartResult } from '../../../shared/ports/executions.ts';
import type { Mailbox } from '../../../shared/ports/mailbox.ts';
import type { Timers } from '../../../shared/ports/timers.ts';
import { type Faults, InjectedFault } from '../faults.ts';
import type { Recorder } from '../recorder.ts';
import { Rng, type Scheduler, type TaskHandle } from '../scheduler.ts';

export interface ActorContext {
  readonly seed: number;
  readonly sched: Scheduler;
  readonly mailbox: Mailbox;
  readonly store: MemoryStorePort;
  readonly tokens: TokenDesk;
  readonly recorder: Recorder;
  readonly faults: Faults;
  readonly settings: RunSettings;
  /** A person is told that a step waits for a decision (they look at its approvals later). */
  readonly notice: (runId: string, stepId: string, generation: number, timeoutSeconds: number) => void;
}

/** A running execution of a machine: stopping it ends its wait and every later move it would make. */
export class Execution {
  stopped = false;
  /** The token its wait holds, if it waits. */
  token: string | undefined;

  constructor(
    readonly name: string,
    private readonly tokens: TokenDesk,
  ) {}

  stop(): void {
    this.stopped = true;
    if (this.token !== undefined) this.tokens.stop(this.token);
  }
}

/** The actor's own stream: drawn by its name, so its choices do not depend on who drew before it. */
export const streamOf = (ctx: ActorContext, label: string): Rng => Rng.of(ctx.seed, label);

/** An execution's word to its run; under `lambda.invoke:crash-after` it is sent again a little later. */
export async function tell(ctx: ActorContext, runId: string, command: RunCommandInput): Promise<void> {
  await ctx.mailbox.send(runId, command);
  const fault = ctx.faults.draw('lambda.invoke', ['crash-after']);
  if (fault !== undefined) ctx.sched.after(fault.rng.int(200, 5_000), () => void ctx.mailbox.send(runId, command));
}

/** Asks the run (a person, the client) and records the answer the decider gave, for the checks to hold it to. */
export async function ask(ctx: ActorContext, runId: string, command: RunCommandInput): Promise<Reply | undefined> {
  const askedAt = ctx.sched.now;
  let reply: Reply | undefined;
  try {
    reply = await ctx.mailbox.ask(runId, command);
  } catch {
    reply = undefined;
  }
  ctx.recorder.answered(runId, { command, reply, askedAt, answeredAt: ctx.sched.now });
  return reply;
}

export type WaitEnd =
  | { readonly kind: 'answered'; readonly output: Readonly<Record<string, unknown>> }
  | { readonly kind: 'timedOut' }
  | { readonly kind: 'stopped' };

interface OpenWait {
  readonly end: (how: WaitEnd) => void;
  readonly timer: TaskHandle;
}

export class TokenDesk {
  private readonly open = new Map<string, OpenWait>();

  constructor(private readonly sched: Scheduler) {}

  /** Opens `token` for `timeoutMs`; resolves with how the wait ended. */
  wait(token: string, timeoutMs: number): Promise<WaitEnd> {
    return new Promise((resolve) => {
      const timer = this.sched.after(timeoutMs, () => {
        this.open.delete(token);
        resolve({ kind: 'timedOut' });
      });
      this.open.set(token, { end: resolve, timer });
    });
  }

  /** SendTaskSuccess: refused for a token that is not open. */
  answer(token: string, output: Readonly<Record<string, unknown>>): void {
    const wait = this.open.get(token);
    if (wait === undefined) throw new ConflictError(`TaskTimedOut: the task token ${token} is no longer open`);
    this.end(token, wait, { kind: 'answered', output });
  }

  /** Ends a wait because its execution was stopped. */
  stop(token: string): void {
    const wait = this.open.get(token);
    if (wait !== undefined) this.end(token, wait, { kind: 'stopped' });
  }

  /** The token stops answering, its wait left for a new one (a retried Task's): false when it had ended already. */
  retire(token: string): boolean {
    const wait = this.open.get(token);
    if (wait === undefined) return false;
    this.open.delete(token);
    wait.timer.cancel();
    return true;
  }

  private end(token: string, wait: OpenWait, how: WaitEnd): void {
    this.open.delete(token);
    wait.timer.cancel();
    wait.end(how);
  }
}

/** What runs an execution once it is started (the world binds it to the actors). */
export type Spawn = (machine: MachineName, exec: Execution, input: Readonly<Record<string, unknown>>) => Promise<void>;

export interface SimExecutionsDeps {
  readonly sched: Scheduler;
  readonly tokens: TokenDesk;
  /** A call to Step Functions: a few virtual milliseconds, and the faults of `sfn.start`. */
  readonly latency: () => Promise<void>;
  readonly faults: Faults;
  readonly spawn: Spawn;
  /** An actor that threw: a bug of the simulation, reported, never swallowed. */
  readonly onCrash: (name: string, error: unknown) => void;
}

export class SimExecutions implements Executions {
  readonly started = new Map<string, Execution>();

  constructor(private readonly deps: SimExecutionsDeps) {}

  /** A call to the service: its latency, and a refusal under `sfn.start:throttle`. */
  private async call(): Promise<void> {
    await this.deps.latency();
    const fault = this.deps.faults.draw('sfn.start');
    if (fault !== undefined) throw new InjectedFault('sfn.start', fault.fault);
  }

  async start(machine: MachineName, name: string, input: Readonly<Record<string, unknown>>): Promise<StartResult> {
    await this.call();
    if (this.started.has(name)) return { executionId: name, started: false };
    const exec = new Execution(name, this.deps.tokens);
    this.started.set(name, exec);
    this.deps.sched.after(0, () => {
      this.deps.spawn(machine, exec, input).catch((error: unknown) => this.deps.onCrash(name, error));
    });
    return { executionId: name, started: true };
  }

  async sendTaskSuccess(taskToken: string, output: unknown): Promise<void> {
    await this.call();
    this.deps.tokens.answer(taskToken, (output ?? {}) as Readonly<Record<string, unknown>>);
  }

  async sendTaskFailure(taskToken: string): Promise<void> {
    await this.deps.latency();
    this.deps.tokens.stop(taskToken);
  }

  async stop(executionId: string): Promise<void> {
    await this.stopNamed('step', executionId);
  }

  async stopNamed(_machine: MachineName, name: string): Promise<void> {
    await this.call();
    this.started.get(name)?.stop();
  }
}

/** The timers: one per name, each delivering its command at its time. */
export class SimTimers implements Timers {
  private readonly set = new Set<string>();

  constructor(
    private readonly sched: Scheduler,
    private readonly mailbox: Mailbox,
    private readonly latency: () => Promise<void>,
  ) {}

  async schedule(runId: string, name: string, at: string, command: RunCommand): Promise<void> {
    await this.latency();
    if (this.set.has(name)) return;
    this.set.add(name);
    const { at: _stamped, ...input } = command;
    this.sched.at(Date.parse(at), () => void this.mailbox.send(runId, input as RunCommandInput));
  }
}

/**
 * Executions for tests of code that starts executions and answers task tokens (the API): the Step Functions adapter
 * on the in-memory Step Functions of fake-sfn.ts — the pair the Executions behaviour suite runs against — with a
 * record of every call that succeeded. The record only remembers; what an execution does is the fake service's.
 */
import type { Executions, MachineName, StartResult } from '../../shared/ports/executions.ts';
import type { ExecutionsHarness } from './executions-behaviour.ts';
import { fakeSfnHarness } from './fake-sfn.ts';

export interface StartCall {
  readonly machine: MachineName;
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
  /** As the adapter reported it: an identical start of a running execution is `started: true`, like on AWS. */
  readonly started: boolean;
}

export class RecordedExecutions implements Executions {
  readonly starts: StartCall[] = [];
  readonly successes: { token: string; output: unknown }[] = [];
  readonly failures: { token: string; error: string; cause: string }[] = [];
  readonly stops: { executionId: string; error: string; cause: string }[] = [];
  /** The fake Step Functions behind the adapter: start a task that waits on a token, time it out, count. */
  readonly sfn: ExecutionsHarness;
  readonly #adapter: Executions;
  readonly #waiting = new Map<string, string>();

  constructor(sfn: ExecutionsHarness = fakeSfnHarness()) {
    this.sfn = sfn;
    this.#adapter = sfn.executions;
  }

  /** Names of the executions that exist, in the order they were first started. */
  startedNames(): string[] {
    return [...new Set(this.starts.filter((s) => s.started).map((s) => s.name))];
  }

  /** Starts a step execution that parks on a task token, as a gate does, and returns the token. */
  async waitingToken(name: string, input: Record<string, unknown> = {}): Promise<string> {
    const { executionId, token } = await this.sfn.startWaiting('step', name, input);
    this.#waiting.set(token, executionId);
    return token;
  }

  /** The task waiting on `token` runs out of time: the step no longer waits for an answer. */
  async timeOut(token: string): Promise<void> {
    await this.sfn.expire(token, this.#waiting.get(token) ?? '');
  }

  async start(machine: MachineName, name: string, input: Readonly<Record<string, unknown>>): Promise<StartResult> {
    const result = await this.#adapter.start(machine, name, input);
    this.starts.push({ machine, name, input, started: result.started });
    return result;
  }

  async sendTaskSuccess(token: string, output: unknown): Promise<void> {
    await this.#adapter.sendTaskSuccess(token, output);
    this.successes.push({ token, output });
  }

  async sendTaskFailure(token: string, error: string, cause: string): Promise<void> {
    await this.#adapter.sendTaskFailure(token, error, cause);
    this.failures.push({ token, error, cause });
  }

  async stop(executionId: string, error: string, cause: string): Promise<void> {
    await this.#adapter.stop(executionId, error, cause);
    this.stops.push({ executionId, error, cause });
  }

  async stopNamed(machine: MachineName, name: string, error: string, cause: string): Promise<void> {
    await this.#adapter.stopNamed(machine, name, error, cause);
    this.stops.push({ executionId: `${machine}:${name}`, error, cause });
  }
}

/**
 * Scripted capabilities for engine tests through the embedded runtime: a tool that echoes, a tool that needs a whole
 * number, an agent that writes a draft, and a human gate (given to `startLocalStack` as `extraCapabilities`). What a
 * call answers is scripted per step: the step's input names a script (`{ script: key }`, a key unique to the test),
 * and the script sees the attempt and decides — succeed with an output (and a confidence), or fail retryably or for
 * good with a code. Without a script a call echoes its input (less the key); every call is recorded. The ledger
 * tool is the one with a side effect (`mutating`): a call that succeeds appends an entry to the pack's ledger once
 * its script has answered, and returns the entry's id.
 */
import { randomUUID } from 'node:crypto';
import { builtinBinding } from '../../shared/capabilities/builtin.ts';
import { capabilityError } from '../../shared/capabilities/capability-errors.ts';
import type { Capability, PlanStep } from '../../shared/plan/schema.ts';
import type { CapabilityBinding, CapabilityCall } from '../../shared/ports/capabilities.ts';

export const TARGETS = {
  echo: 'tool:test.echo',
  count: 'tool:test.count',
  writer: 'agent:test.writer',
  approver: 'human:test.approver',
  ledger: 'tool:test.ledger',
} as const;

const CAPABILITIES: readonly Capability[] = [
  {
    target: TARGETS.echo,
    description: 'Returns what it is given.',
    sideEffect: 'none',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object' },
  },
  {
    target: TARGETS.count,
    description: 'Needs a whole number.',
    sideEffect: 'none',
    inputSchema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
    outputSchema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
  },
  {
    target: TARGETS.writer,
    description: 'Writes a draft.',
    sideEffect: 'none',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object', required: ['draft'], properties: { draft: { type: 'string' } } },
  },
  {
    target: TARGETS.ledger,
    description: 'Appends an entry to the ledger (a side effect).',
    sideEffect: 'mutating',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object', required: ['entryId'], properties: { entryId: { type: 'string' } } },
  },
  {
    target: TARGETS.approver,
    description: 'A person approves.',
    sideEffect: 'none',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object' },
  },
];

/** What one call of a scripted step answers. */
export type Answer =
  | { readonly output: unknown; readonly confidence?: number }
  | { readonly error: { readonly code: string; readonly message?: string; readonly retryable: boolean } };

/** A call as the script sees it. */
export interface ScriptedCall {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly attempt: number;
  /** The evaluated input, without the script key. */
  readonly input: Record<string, unknown>;
}

export type Script = (call: ScriptedCall) => Answer | Promise<Answer>;

export const succeed =
  (output: unknown, confidence?: number): Script =>
  () =>
    confidence === undefined ? { output } : { output, confidence };

export const fail =
  (code: string, retryable: boolean): Script =>
  () => ({ error: { code, message: `${code} happened`, retryable } });

/** Fails retryably (with `code`) on the first `failures` attempts, then succeeds with `{ attempt }`. */
export const flaky =
  (failures: number, code = 'E_FLAKY'): Script =>
  (call) =>
    call.attempt <= failures
      ? { error: { code, message: `attempt ${call.attempt} fails`, retryable: true } }
      : { output: { attempt: call.attempt } };

/** A script that waits for `release` before answering with `then` (a step a test holds in flight). */
export function held(then: Script = (call) => ({ output: call.input })): { script: Script; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    script: async (call) => {
      await released;
      return then(call);
    },
    release,
  };
}

/** `parties` calls answer together: each waits until all have been made (steps finishing at the same moment). */
export function together(parties: number, then: Script = (call) => ({ output: call.input })): Script {
  let arrived = 0;
  let open!: () => void;
  const all = new Promise<void>((resolve) => {
    open = resolve;
  });
  return async (call) => {
    arrived += 1;
    if (arrived >= parties) open();
    await all;
    return then(call);
  };
}

/** A side effect of the ledger tool: made once its call answered, whatever became of the step afterwards. */
export interface LedgerEntry {
  readonly entryId: string;
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly attempt: number;
}

export interface ScriptedPack {
  readonly capabilities: readonly Capability[];
  readonly bindings: Readonly<Record<string, CapabilityBinding>>;
  /** Registers a script under a fresh key: put `{ script: key }` in the step's input. */
  register(script: Script): string;
  /** Calls made so far for a run (optionally one step), in order. */
  calls(runId: string, stepId?: string): ScriptedCall[];
  /** Side effects of the ledger tool made so far for a run (optionally one step), in order. */
  ledger(runId: string, stepId?: string): LedgerEntry[];
}

const SCRIPT_FIELD = 'script';

export function createScriptedPack(): ScriptedPack {
  const scripts = new Map<string, Script>();
  const made: ScriptedCall[] = [];
  const entries: LedgerEntry[] = [];

  const answer = async (call: CapabilityCall, agent: boolean) => {
    const raw = (typeof call.input === 'object' && call.input !== null ? call.input : {}) as Record<string, unknown>;
    const { [SCRIPT_FIELD]: key, ...input } = raw;
    const scripted: ScriptedCall = {
      runId: call.runId,
      stepId: call.stepId,
      generation: call.generation,
      attempt: call.attempt,
      input,
    };
    made.push(scripted);
    const script = typeof key === 'string' ? scripts.get(key) : undefined;
    const result: Answer = script ? await script(scripted) : { output: input, ...(agent ? { confidence: 1 } : {}) };
    if ('error' in result)
      throw capabilityError(result.error.code, result.error.message ?? `${result.error.code} happened`, {
        retryable: result.error.retryable,
      });
    return result;
  };

  const binding = (target: string): CapabilityBinding =>
    builtinBinding(target, (call) => answer(call, target.startsWith('agent:')));

  const ledger: CapabilityBinding = builtinBinding(TARGETS.ledger, async (call) => {
    await answer(call, false);
    const entryId = `entry-${entries.length + 1}`;
    const { runId, stepId, generation, attempt } = call;
    entries.push({ entryId, runId, stepId, generation, attempt });
    return { output: { entryId } };
  });

  return {
    capabilities: CAPABILITIES,
    bindings: {
      [TARGETS.echo]: binding(TARGETS.echo),
      [TARGETS.count]: binding(TARGETS.count),
      [TARGETS.writer]: binding(TARGETS.writer),
      [TARGETS.ledger]: ledger,
    },
    register(script) {
      const key = `script-${randomUUID()}`;
      scripts.set(key, script);
      return key;
    },
    calls: (runId, stepId) => made.filter((c) => c.runId === runId && (stepId === undefined || c.stepId === stepId)),
    ledger: (runId, stepId) =>
      entries.filter((e) => e.runId === runId && (stepId === undefined || e.stepId === stepId)),
  };
}

/** Plan-step fields a scripted step may set besides its id and dependencies; `script` decides its answers. */
export type ScriptedStepFields = Partial<PlanStep> & { readonly script?: Script };

/**
 * Builds plan steps for the scripted pack: contracts copied from the catalog (the validator wants them equal), an
 * input of `{ from: id }` unless given, and the step's script registered under a fresh key.
 */
export function stepsOf(pack: ScriptedPack) {
  return (id: string, dependsOn: string[] = [], fields: ScriptedStepFields = {}): PlanStep => {
    const { script, ...rest } = fields;
    const target = rest.target === undefined ? TARGETS.echo : rest.target;
    const capability = target === null ? undefined : CAPABILITIES.find((c) => c.target === target);
    const input = (rest.input ?? { from: id }) as Record<string, unknown>;
    return {
      id,
      title: `Step ${id}`,
      target,
      dependsOn,
      ...(capability ? { inputSchema: capability.inputSchema, outputSchema: capability.outputSchema } : {}),
      // The validator wants a way back from a side effect.
      ...(capability?.sideEffect === 'mutating' ? { rollbackHint: `undo what ${id} did` } : {}),
      ...rest,
      input: (script ? { ...input, [SCRIPT_FIELD]: pack.register(script) } : input) as PlanStep['input'],
    };
  };
}

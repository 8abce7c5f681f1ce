/**
 * The fault points wired into one embedded stack: the DynamoDB client's middleware (store.write, store.read,
 * index.read) is installed at once, and boot passes each other part of the stack through its wrapper (bus.deliver,
 * sfn.start, capability.call, lambda.invoke). Without faults every wrapper is the identity.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { BusEnvelope, LocalEventBus } from '../../../shared/adapters/local/event-bus.ts';
import type { StreamRecord } from '../../../shared/events/outbox.ts';
import type { CapabilityRegistry } from '../../../shared/ports/capabilities.ts';
import type { Executions } from '../../../shared/ports/executions.ts';
import type { LocalHandler } from '../local-executions.ts';
import { faultyBus } from './bus.ts';
import { faultyRegistry } from './capabilities.ts';
import { faultyExecutions } from './executions.ts';
import { injectIndexLag } from './index-lag.ts';
import type { FaultInjector } from './injector.ts';
import { faultyHandler } from './lambda.ts';
import { formatFaultSpec } from './spec.ts';
import { injectStoreFaults } from './store.ts';

/** The faults a stack injects: the spec it runs, its seed (to repeat the run), and what fired so far. */
export interface LocalStackFaults {
  readonly spec: string;
  readonly seed: number;
  /** How often each `point:fault` fired. */
  injected(): Readonly<Record<string, number>>;
  /** How many calls each point drew for (out of which its faults fired). */
  calls(): Readonly<Record<string, number>>;
  /** Stops (true) or resumes (false) injecting (FaultInjector.pause). */
  pause(paused: boolean): void;
}

export interface FaultHooks {
  /** Absent without faults. */
  readonly report: LocalStackFaults | undefined;
  bus(bus: LocalEventBus, onError: (error: unknown, event: BusEnvelope) => void): LocalEventBus;
  executions(executions: Executions): Executions;
  registry(registry: CapabilityRegistry): CapabilityRegistry;
  handler(key: string, handler: LocalHandler): LocalHandler;
}

export interface FaultTargets {
  readonly client: DynamoDBClient;
  /** The table's change stream: a write whose answer is lost still reaches it. */
  readonly stream: (record: StreamRecord) => void;
}

export function faultHooks(faults: FaultInjector | undefined, targets: FaultTargets): FaultHooks {
  if (faults === undefined)
    return {
      report: undefined,
      bus: (bus) => bus,
      executions: (executions) => executions,
      registry: (registry) => registry,
      handler: (_key, handler) => handler,
    };
  injectStoreFaults(targets.client, faults, { stream: targets.stream });
  injectIndexLag(targets.client, faults);
  return {
    report: {
      spec: formatFaultSpec(faults.rules),
      seed: faults.seed,
      injected: faults.injected,
      calls: faults.calls,
      pause: faults.pause,
    },
    bus: (bus, onError) => faultyBus(faults, bus, onError),
    executions: (executions) => faultyExecutions(faults, executions),
    registry: (registry) => faultyRegistry(faults, registry),
    handler: (key, handler) => faultyHandler(faults, key, handler),
  };
}

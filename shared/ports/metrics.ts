/**
 * Operational metrics (CloudWatch EMF deployed, nothing embedded). Services call the sink where a fact is known: a
 * step succeeded, an approval was decided after so long. Dimensions are low-cardinality names (a capability, an
 * approval kind), never ids.
 */
export type MetricDimensions = Readonly<Record<string, string>>;

export interface MetricsSink {
  count(name: string, value: number, dimensions?: MetricDimensions): void;
  duration(name: string, milliseconds: number, dimensions?: MetricDimensions): void;
}

export const NO_METRICS: MetricsSink = {
  count: () => {},
  duration: () => {},
};

/** The metric names cairn emits: one list, so the dashboard and the emitters cannot drift apart. */
export const METRIC_NAMES = {
  stepsSucceeded: 'StepsSucceeded',
  stepsFailed: 'StepsFailed',
  stepsRetried: 'StepsRetried',
  stepsBlocked: 'StepsBlocked',
  stepDuration: 'StepDuration',
  approvalWait: 'ApprovalWaitTime',
  replans: 'Replans',
  invalidations: 'Invalidations',
  capabilityCallDuration: 'CapabilityCallDuration',
  /** Stream batches the outbox redrive read back and relayed after the stream gave up on them. */
  outboxRedriven: 'OutboxRedriven',
  /** Dead letters of the outbox no redrive can relay (dimension `reason`: expired, unreadable). */
  outboxDeadLettersStuck: 'OutboxDeadLettersStuck',
} as const;

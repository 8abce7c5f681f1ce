/**
 * Powertools for AWS Lambda around every Lambda entry: a structured logger whose entries carry the payload's
 * runId/stepId/generation, an X-Ray subsegment per handler call and per capability call (annotated with runId and
 * stepId), and CloudWatch metrics in EMF through the MetricsSink port the services call.
 *
 * Only the exported `handler` of each entry is wrapped; `createHandler(deps)` stays bare, so tests and the embedded
 * runtime neither print EMF nor need X-Ray. Outside Lambda the tracer switches itself off.
 *
 * Environment (set by the CDK functions construct): POWERTOOLS_SERVICE_NAME, POWERTOOLS_METRICS_NAMESPACE,
 * POWERTOOLS_LOG_LEVEL.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import type { Context } from 'aws-lambda';
import type { CapabilityBinding, CapabilityRegistry } from '../shared/ports/capabilities.ts';
import { METRIC_NAMES, type MetricDimensions, type MetricsSink } from '../shared/ports/metrics.ts';

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

export const DEFAULT_SERVICE_NAME = 'cairn';
export const DEFAULT_METRICS_NAMESPACE = 'Cairn';

export interface Observability {
  readonly logger: Logger;
  readonly tracer: Tracer;
  readonly metrics: Metrics;
  /** The services' MetricsSink on top of `metrics`: one EMF record per fact, with its own dimensions. */
  readonly sink: MetricsSink;
}

type Env = Readonly<Record<string, string | undefined>>;

export function createObservability(env: Env = process.env): Observability {
  const serviceName = env.POWERTOOLS_SERVICE_NAME || DEFAULT_SERVICE_NAME;
  const logger = new Logger({ serviceName });
  const tracer = new Tracer({ serviceName });
  const metrics = new Metrics({
    serviceName,
    namespace: env.POWERTOOLS_METRICS_NAMESPACE || DEFAULT_METRICS_NAMESPACE,
  });
  return { logger, tracer, metrics, sink: metricsSink(metrics, logger) };
}

/** A sink that never throws: a metric that cannot be written is logged and dropped, the work goes on. */
export function metricsSink(metrics: Metrics, logger: Logger): MetricsSink {
  const emit = (name: string, unit: Unit, value: number, dimensions?: MetricDimensions): void => {
    try {
      const single = metrics.singleMetric();
      if (dimensions !== undefined) single.addDimensions({ ...dimensions });
      single.addMetric(name, unit, value);
    } catch (error) {
      logger.warn('metric dropped', { metric: name, error: error as Error });
    }
  };
  return {
    count: (name, value, dimensions) => emit(name, MetricUnit.Count, value, dimensions),
    duration: (name, ms, dimensions) => emit(name, MetricUnit.Milliseconds, ms, dimensions),
  };
}

// One set per Lambda container, built on the first call so importing an entry module reads no environment.
let shared: Observability | undefined;
export const observability = (): Observability => {
  shared ??= createObservability();
  return shared;
};

/** The ids a task payload carries (Step Functions sends `{ action?, runId, stepId?, generation? }`). */
export interface PayloadKeys {
  runId?: string;
  stepId?: string;
  generation?: number;
  action?: string;
}

export function payloadKeys(event: unknown): PayloadKeys {
  if (typeof event !== 'object' || event === null) return {};
  const { runId, stepId, generation, action } = event as Record<string, unknown>;
  return {
    ...(typeof runId === 'string' ? { runId } : {}),
    ...(typeof stepId === 'string' ? { stepId } : {}),
    ...(typeof generation === 'number' ? { generation } : {}),
    ...(typeof action === 'string' ? { action } : {}),
  };
}

const isLambdaContext = (value: unknown): value is Context =>
  typeof value === 'object' && value !== null && typeof (value as Context).awsRequestId === 'string';

/** Runs `work` in an X-Ray subsegment annotated with the given ids; errors are recorded on it and rethrown. */
export async function traced<R>(
  tracer: Tracer,
  name: string,
  annotations: Readonly<Record<string, string | number | undefined>>,
  work: () => Promise<R>,
): Promise<R> {
  const parent = tracer.getSegment();
  const segment = parent?.addNewSubsegment(name);
  if (segment) tracer.setSegment(segment);
  try {
    for (const [key, value] of Object.entries(annotations)) {
      if (value !== undefined) tracer.putAnnotation(key, value);
    }
    return await work();
  } catch (error) {
    tracer.addErrorAsMetadata(error as Error);
    throw error;
  } finally {
    segment?.close();
    if (parent) tracer.setSegment(parent);
  }
}

/**
 * Wraps a Lambda handler: logger context and persistent keys from the payload (removed again afterwards, so a warm
 * container never lends one run's ids to the next event), a `## <name>` subsegment, the cold-start metric, and a
 * flush of any metrics stored on the shared instance.
 */
export function observe<E, C, R>(
  name: string,
  handler: (event: E, context: C) => Promise<R>,
  get: () => Observability = observability,
): (event: E, context: C) => Promise<R> {
  return async (event, context) => {
    const { logger, tracer, metrics } = get();
    const keys = payloadKeys(event);
    if (isLambdaContext(context)) logger.addContext(context);
    logger.appendPersistentKeys({ ...keys });
    metrics.captureColdStartMetric();
    try {
      return await traced(tracer, `## ${name}`, { runId: keys.runId, stepId: keys.stepId, action: keys.action }, () => {
        tracer.annotateColdStart();
        tracer.addServiceNameAnnotation();
        return handler(event, context);
      });
    } catch (error) {
      logger.error(`${name} failed`, error as Error);
      throw error;
    } finally {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
      logger.removePersistentKeys(Object.keys(keys));
    }
  };
}

/** Every capability call of the step executor in its own subsegment, with its duration as a metric. */
export function observedRegistry(registry: CapabilityRegistry, get: () => Observability = observability) {
  const wrap = (target: string, binding: CapabilityBinding): CapabilityBinding => ({
    kind: binding.kind,
    invoke: async (call) => {
      const { tracer, sink } = get();
      const started = performance.now();
      try {
        return await traced(
          tracer,
          `### ${target}`,
          { runId: call.runId, stepId: call.stepId, capability: target, attempt: call.attempt },
          () => binding.invoke(call),
        );
      } finally {
        sink.duration(METRIC_NAMES.capabilityCallDuration, Math.round(performance.now() - started), {
          capability: target,
          binding: binding.kind,
        });
      }
    },
  });
  return {
    binding: (target: string): CapabilityBinding | undefined => {
      const binding = registry.binding(target);
      return binding === undefined ? undefined : wrap(target, binding);
    },
  } satisfies CapabilityRegistry;
}

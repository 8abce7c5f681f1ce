/**
 * The account quotas of one embedded stack (aws-quotas.ts), built once and handed to each part of the stack boot
 * wires: the executions' StartExecution bucket, the Tasks' share of the account's Lambda concurrency (through
 * LocalExecutionsOptions.accountConcurrency), the asynchronous invocations' share of it, the table's partition
 * throughput and the API's time limit, all counting what they refuse in one ThrottleCounter.
 */
import { GSI1_NAME, GSI1_PARTITION_KEY, PARTITION_KEY } from '../../../shared/adapters/aws/table-layout.ts';
import type { Executions } from '../../../shared/ports/executions.ts';
import type { Fetch } from '../api-payload-limits.ts';
import type { DynaliteCall } from '../dynalite-in-process.ts';
import { PLACEHOLDER_ACCOUNT, PLACEHOLDER_REGION } from '../template.ts';
import { withApiTimeout } from './api-timeout.ts';
import { type AwsQuotas, type AwsQuotasOptions, resolveQuotas } from './aws-quotas.ts';
import { type ConcurrencyGate, createConcurrencyGate } from './concurrency-gate.ts';
import { withPartitionQuotas } from './dynamo-partitions.ts';
import { createPartitionThroughput } from './partition-throughput.ts';
import type { SdkRetryOptions } from './sdk-retries.ts';
import { withStartQuota } from './sfn-start.ts';
import { createThrottleCounter, type ThrottleCounter } from './throttle-counter.ts';
import { createTokenBucket } from './token-bucket.ts';

export interface StackQuotas {
  readonly quotas: AwsQuotas;
  readonly counter: ThrottleCounter;
  /** The account's Lambda concurrency (Tasks take a place or are throttled; asynchronous invocations wait). */
  readonly lambda: ConcurrencyGate;
  /** The executions behind StartExecution's bucket. */
  executions(executions: Executions): Executions;
  /** The table behind its partitions' throughput (dynalite-in-process.ts `aroundCalls`). */
  dynamo(call: DynaliteCall): DynaliteCall;
  /** The API behind its time limit. */
  api(fetch: Fetch): Fetch;
  /** An asynchronously invoked handler (a bus rule's target, the outbox, a planning job): waits for a place. */
  async<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
}

export interface StackQuotasOptions extends AwsQuotasOptions {
  /** Milliseconds, for the buckets (tests). */
  readonly now?: () => number;
  readonly retries?: SdkRetryOptions;
  /** The table's name, for the ARNs a throttling reason names. */
  readonly tableName: string;
}

export function stackQuotas(options: StackQuotasOptions): StackQuotas {
  const quotas = resolveQuotas(options);
  const counter = createThrottleCounter();
  const clock = options.now === undefined ? {} : { now: options.now };
  const bucket = createTokenBucket({
    capacity: quotas.sfnStartBucket,
    refillPerSecond: quotas.sfnStartRefillPerSecond,
    ...clock,
  });
  const lambda = createConcurrencyGate(quotas.lambdaConcurrency);
  const throughput = createPartitionThroughput({
    readUnitsPerSecond: quotas.partitionReadUnitsPerSecond,
    writeUnitsPerSecond: quotas.partitionWriteUnitsPerSecond,
    ...clock,
  });
  const tableArn = `arn:aws:dynamodb:${PLACEHOLDER_REGION}:${PLACEHOLDER_ACCOUNT}:table/`;
  return {
    quotas,
    counter,
    lambda,
    executions: (executions) =>
      withStartQuota(executions, {
        bucket,
        counter,
        ...(options.retries === undefined ? {} : { retries: options.retries }),
      }),
    dynamo: (call) =>
      withPartitionQuotas(call, {
        throughput,
        schema: { hashKey: PARTITION_KEY, indexHashKeys: { [GSI1_NAME]: GSI1_PARTITION_KEY } },
        arnOf: (resource) => `${tableArn}${resource}`,
        onThrottle: (kind) => counter.count(kind === 'read' ? 'dynamodb.read' : 'dynamodb.write'),
      }),
    api: (fetch) => withApiTimeout(fetch, quotas.apiTimeoutMs, counter),
    async:
      (handler) =>
      async (...args) => {
        if (lambda.inUse() >= lambda.limit) counter.count('lambda.waited');
        const leave = await lambda.enter();
        try {
          return await handler(...args);
        } finally {
          leave();
        }
      },
  };
}

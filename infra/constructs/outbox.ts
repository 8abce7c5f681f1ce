/**
 * The outbox's deployed half: the table's change stream feeds the Outbox Lambda through an event source mapping that
 * passes only the records carrying an outbox (the ones `outboxOf` relays embedded; a test keeps the two equal) and
 * the removals of run items by TTL (`expiredRunOf`: the rest of the run is deleted after them), in
 * order per item (parallelization 1 per shard), with bisection and retries; a batch that still fails is sent to a
 * dead-letter queue, so an announced event is delayed, never dropped silently.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, type IFunction, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { EXPIRED_RUN_STREAM_FILTER } from '../../shared/events/expired-runs.ts';
import { OUTBOX_STREAM_FILTER } from '../../shared/events/outbox.ts';

/** How the stream's batches are retried before they are dead-lettered. */
export const OUTBOX_DELIVERY = { batchSize: 100, retryAttempts: 10, maxRecordAge: Duration.hours(24) } as const;

export interface CairnOutboxProps {
  readonly table: ITable;
  readonly relay: IFunction;
}

export class CairnOutbox extends Construct {
  /** Stream batches the relay could not deliver after every retry (their records' coordinates, to replay). */
  readonly deadLetters: Queue;

  constructor(scope: Construct, id: string, props: CairnOutboxProps) {
    super(scope, id);
    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    props.relay.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: OUTBOX_DELIVERY.batchSize,
        bisectBatchOnError: true,
        retryAttempts: OUTBOX_DELIVERY.retryAttempts,
        maxRecordAge: OUTBOX_DELIVERY.maxRecordAge,
        parallelizationFactor: 1,
        onFailure: new SqsDlq(this.deadLetters),
        // Announcements, and run items TTL removed: what the run left is deleted after them (dynamo-retention.ts).
        filters: [FilterCriteria.filter(OUTBOX_STREAM_FILTER), FilterCriteria.filter(EXPIRED_RUN_STREAM_FILTER)],
      }),
    );
  }
}

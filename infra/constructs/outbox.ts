/**
 * The outbox's deployed half: the table's change stream feeds the Outbox Lambda through an event source mapping that
 * passes only the records carrying an outbox (the ones `outboxOf` relays embedded; a test keeps the two equal) and
 * the removals of run items by TTL (`expiredRunOf`: the rest of the run is deleted after them), in
 * order per item (parallelization 1 per shard), with bisection and retries; a batch that still fails has its
 * coordinates sent to the on-failure queue. The same function, on a schedule (every REDRIVE_EVERY_SECONDS), is the
 * redrive: it reads those coordinates, reads the batch back from the stream (which keeps it 24 hours) and relays it
 * (shared/services/outbox/redrive.ts). So an announced event is delayed, never dropped silently; one the stream no
 * longer holds stays in the queue, which is alarmed on (observability.ts), as is the stream's iterator age.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { FilterCriteria, type Function as LambdaFn, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { type IQueue, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { EXPIRED_RUN_STREAM_FILTER } from '../../shared/events/expired-runs.ts';
import { OUTBOX_STREAM_FILTER } from '../../shared/events/outbox.ts';
import { REDRIVE_EVERY_SECONDS } from '../../shared/services/outbox/redrive.ts';

/** How the stream's batches are retried before they are dead-lettered. */
export const OUTBOX_DELIVERY = { batchSize: 100, retryAttempts: 10, maxRecordAge: Duration.hours(24) } as const;

export interface CairnOutboxProps {
  readonly table: ITable;
  /** The outbox Lambda: the stream's consumer and, on the schedule, its redrive. */
  readonly relay: LambdaFn;
  /** Where an event rule's target that could not be invoked leaves the event (the bus rules' queue, alarmed). */
  readonly targetDeadLetters: IQueue;
}

export class CairnOutbox extends Construct {
  /** Stream batches the relay could not deliver after every retry (their records' coordinates, to replay). */
  readonly deadLetters: Queue;
  /** The redrive's schedule: the outbox Lambda invoked with a `Scheduled Event`. */
  readonly redrive: Rule;

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
    // The redrive: the mapping's grants already let this function (and no other) read the stream; it alone also
    // takes and deletes the on-failure queue's messages.
    this.deadLetters.grantConsumeMessages(props.relay);
    props.relay.addEnvironment('CAIRN_OUTBOX_DEAD_LETTERS_URL', this.deadLetters.queueUrl);
    this.redrive = new Rule(this, 'Redrive', {
      description: 'cairn outbox redrive: relays again the stream batches the outbox Lambda gave up on',
      schedule: Schedule.rate(Duration.seconds(REDRIVE_EVERY_SECONDS)),
      // An invocation refused (throttled) is tried again within the period, then dead-lettered like every rule's; a
      // pass that failed is not redone: its messages come back to the queue, and the next pass takes them.
      targets: [
        new LambdaFunction(props.relay, {
          retryAttempts: 2,
          maxEventAge: Duration.seconds(REDRIVE_EVERY_SECONDS - 60),
          deadLetterQueue: props.targetDeadLetters,
        }),
      ],
    });
  }
}

/**
 * The runs' mailbox deployed (shared/adapters/aws/sqs-mailbox.ts, scheduler-timers.ts): one SQS FIFO queue, the run
 * id as message group, read by the decider Lambda (functions/decider.ts) through an event source mapping, so a run's
 * commands are decided one batch at a time, in order, and runs side by side; a FIFO dead-letter queue for a letter
 * that failed every receive; and the timers' half: a schedule group of cairn's own for the one-time schedules the
 * decider creates, and the role EventBridge Scheduler sends their letters to the queue with.
 *
 * - Content-based deduplication is on: EventBridge Scheduler sends to a FIFO queue only when it is (its SqsParameters
 *   carry a message group id and no deduplication id). The mailbox's own sends name a MessageDeduplicationId (the
 *   letter's id), which takes precedence over the content hash.
 * - High-throughput FIFO (deduplication and the throughput quota per message group): a queue-wide quota of 300
 *   calls per second per action would cap the whole deployment's decisions, and every letter's deduplication id is
 *   unique within its run's group anyway (a command id, or a timer's hash of run and name).
 * - Visibility timeout: six times the decider's timeout, as AWS advises for a Lambda event source (time for Lambda
 *   to retry a batch throttled behind an earlier one). A batch that fails keeps its run's later letters waiting that
 *   long before they are received again: the decider's timeout is kept short for that reason.
 * - The event source mapping: batches of 10 (FIFO's maximum; FIFO takes no batching window), partial batch responses
 *   (the decider reports a failed run's letters, and only those), and a maximum concurrency: with FIFO, Lambda never
 *   runs more invocations than there are message groups with letters waiting, so the cap only bounds how much of the
 *   account's concurrency a burst of runs may take.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { ScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { DeduplicationScope, FifoThroughputLimit, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** How the decider Lambda receives the mailbox's letters. */
export const MAILBOX_DELIVERY = {
  /** FIFO's largest batch: one invocation decides up to 10 letters, grouped per run. */
  batchSize: 10,
  /** Enough for the bench's 50 runs at once with room to spare, and a tenth of an account's default concurrency. */
  maxConcurrency: 100,
  /** Receives of a letter before it goes to the dead-letter queue (AWS advises at least 5 for a Lambda source). */
  maxReceiveCount: 5,
  /** The queue's visibility timeout, in multiples of the consumer's timeout (AWS's advice for Lambda). */
  visibilityFactor: 6,
} as const;

/** Letters and dead letters are kept two weeks (SQS's longest), like the stack's other dead-letter queues. */
const RETENTION = Duration.days(14);

/** The SQS and Scheduler calls the adapters make (test/infra checks these lists against their sources). */
export const MAILBOX_SEND_ACTIONS = ['sqs:SendMessage'] as const;
export const TIMER_ACTIONS = ['scheduler:CreateSchedule'] as const;

export interface CairnMailboxProps {
  readonly stage: string;
  /** The decider Lambda's timeout: the queue's visibility timeout is MAILBOX_DELIVERY.visibilityFactor times it. */
  readonly consumerTimeout: Duration;
}

export class CairnMailbox extends Construct {
  /** The runs' mailbox (FIFO, the run id as message group). */
  readonly queue: Queue;
  /** Letters the decider failed MAILBOX_DELIVERY.maxReceiveCount times: a run's command not decided. */
  readonly deadLetters: Queue;
  /** Where the decider's one-time schedules (timers) are created, and nowhere else. */
  readonly scheduleGroup: ScheduleGroup;
  /** Assumed by EventBridge Scheduler for the schedules of that group only; it may send to the queue, nothing else. */
  readonly schedulerRole: Role;

  constructor(scope: Construct, id: string, props: CairnMailboxProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.deadLetters = new Queue(this, 'DeadLetters', {
      fifo: true,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: RETENTION,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.queue = new Queue(this, 'Queue', {
      fifo: true,
      contentBasedDeduplication: true,
      deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      // SQS-managed keys: no KMS grant for the senders, the decider or EventBridge Scheduler, no key to pay for.
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // A command waits as long as SQS keeps anything: a decider that is down for days loses nothing.
      retentionPeriod: RETENTION,
      visibilityTimeout: Duration.seconds(props.consumerTimeout.toSeconds() * MAILBOX_DELIVERY.visibilityFactor),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: MAILBOX_DELIVERY.maxReceiveCount },
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // Schedules go with the stack: their target is this stack's queue.
    this.scheduleGroup = new ScheduleGroup(this, 'Timers', {
      scheduleGroupName: `cairn-${props.stage}`,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Confused-deputy protection: Scheduler may assume the role only for a schedule of this account's group.
    this.schedulerRole = new Role(this, 'SchedulerRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnEquals: { 'aws:SourceArn': this.scheduleGroup.scheduleGroupArn },
        },
      }),
      description: `cairn ${props.stage}: EventBridge Scheduler sends the runs' timers to the mailbox`,
    });
    this.grantSend(this.schedulerRole);
  }

  /** `sqs:SendMessage` on the mailbox queue, what the SQS mailbox adapter calls, and nothing more. */
  grantSend(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: [...MAILBOX_SEND_ACTIONS], resources: [this.queue.queueArn] }),
    );
  }

  /**
   * Creating one-time schedules in cairn's group (what the timers adapter calls; Scheduler deletes a fired one
   * itself, ActionAfterCompletion DELETE), and passing the scheduler role to EventBridge Scheduler only.
   */
  grantTimers(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: [...TIMER_ACTIONS], resources: [this.schedulesArn()] }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.schedulerRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
  }

  /** The decider reads the queue: batches of MAILBOX_DELIVERY.batchSize, failed runs' letters reported back. */
  deliverTo(decider: IFunction): void {
    decider.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: MAILBOX_DELIVERY.batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: MAILBOX_DELIVERY.maxConcurrency,
      }),
    );
  }

  /** Every schedule of cairn's group: `schedule/<group>/*` (schedule names are hashes chosen at run time). */
  schedulesArn(): string {
    return Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.scheduleGroup.scheduleGroupName}/*`,
    });
  }
}

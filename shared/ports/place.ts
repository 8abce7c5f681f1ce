/**
 * A place cairn runs in, as the composition root (shared/composition/root.ts) sees it: the adapters behind each
 * port. Deployed, the AWS adapters (shared/adapters/aws/place.ts: DynamoDB, Step Functions, EventBridge, Bedrock,
 * Secrets Manager); embedded, the local ones (infra/local/boot.ts: dynalite through the same DynamoDB adapter,
 * aws-local-stepfunctions, the in-process bus). Everything else (services, planner, registry, defaults) the root
 * builds the same way for both.
 *
 * Each adapter is a factory the root calls once, on first use, so a Lambda builds only what its handler asks for
 * (the validator needs no state machine ARN) and nothing at import.
 */
import type { DemoOptions } from '../capabilities/demo.ts';
import type { Catalog } from '../plan/catalog.ts';
import type { CapabilityBinding, CapabilityRegistry } from './capabilities.ts';
import type { EventPublisher } from './events.ts';
import type { Executions } from './executions.ts';
import type { ExpressionEvaluator } from './expressions.ts';
import type { BatchHandler, Mailbox, Replies } from './mailbox.ts';
import type { MetricsSink } from './metrics.ts';
import type { OutboxDeadLetters } from './outbox-redrive.ts';
import type { PlanJobDispatcher } from './plan-jobs.ts';
import type { PlanModel } from './plan-model.ts';
import type { Retention } from './retention.ts';
import type { RunLog } from './run-log.ts';
import type { Store } from './store.ts';
import type { Timers } from './timers.ts';
import type { WebhookReplayGuard, WebhookSecretLookup } from './webhooks.ts';

export interface Place {
  readonly store: () => Store;
  /** Where runs' decisions are committed (the same table as the store). */
  readonly runLog: (store: Store) => RunLog;
  /**
   * The runs' mailboxes. Embedded, an in-process queue per run that hands batches to `shell`; deployed, the SQS FIFO
   * queue the decider Lambda reads (the shell then runs there, not here).
   */
  readonly mailbox: (shell: BatchHandler) => Mailbox;
  /** Waking a run later (embedded: the stack's clock; deployed: one-time schedules into the mailbox). */
  readonly timers: (mailbox: Mailbox) => Timers;
  /** Where the decider leaves answers for senders waiting elsewhere (deployed only). */
  readonly replies?: () => Replies;
  readonly executions: () => Executions;
  /** Where the outbox relay and the webhooks publish. */
  readonly events: () => EventPublisher;
  readonly catalog: () => Catalog;
  /** The planning model; absent: the HTN method library (embedded, no provider). */
  readonly planModel?: () => PlanModel;
  /**
   * Where the API's planning jobs run (deployed: an asynchronous invocation of the planner or replanner Lambda);
   * absent: in this process, after the request (the root's own planner and replanner).
   */
  readonly planJobDispatcher?: () => PlanJobDispatcher;
  readonly webhookSecrets: () => WebhookSecretLookup;
  readonly replayGuard: (store: Store, clock: () => Date) => WebhookReplayGuard;
  /**
   * The store the outbox relay writes the audit log through (default: `store`). The embedded runtime gives it the
   * table itself, below any wrapper its tests put around the handlers' store, as DynamoDB Streams would see it.
   */
  readonly relayStore?: () => Store;
  /**
   * Deployed only: the outbox stream's on-failure queue and the stream itself, which the outbox redrive reads
   * (shared/services/outbox/redrive.ts). Embedded, the local stream keeps what it failed to relay itself.
   */
  readonly outboxDeadLetters?: () => OutboxDeadLetters;
  /** Deleting what an ended run left once its retention passed (shared/ports/retention.ts), on the same table. */
  readonly retention: () => Retention;
  readonly clock?: () => Date;
  readonly newId?: () => string;
  /**
   * The pace of the decider's step starts in this process, below the account's StartExecution quota
   * (shared/services/runs/start-pacer.ts); absent: the default (deployed); false: none (embedded without quotas).
   */
  readonly startPacing?: { readonly ratePerSecond: number; readonly burst: number } | false;
  /** Where plan expressions run; absent: the worker pool the settings describe (shared/adapters/expressions). */
  readonly expressions?: () => ExpressionEvaluator;
  /** Where the services' operational metrics go (EMF deployed); none when absent. */
  readonly metrics?: () => MetricsSink;
  readonly capabilities?: {
    /** Options of the builtin demo pack (latency, a simulated outage). */
    readonly demo?: DemoOptions;
    /** More bindings, which win over the packs and the configured ones (tests). */
    readonly extra?: Readonly<Record<string, CapabilityBinding>>;
    /** Wraps the finished registry (deployed: an X-Ray subsegment and a duration metric per capability call). */
    readonly wrap?: (registry: CapabilityRegistry) => CapabilityRegistry;
  };
}

/**
 * cairn's own EventBridge bus, an archive of everything published on it (replayable), and the rules of
 * shared/events/bus-rules.ts — the same patterns the embedded bus matches. Every rule target gets a retry policy and
 * the shared dead-letter queue, so an event a target could not take is kept, not dropped. That queue only sees
 * events EventBridge could not hand to Lambda: Lambda takes a target's event asynchronously, and a function that then
 * fails it (after Lambda's own async retries) sends it to its on-failure destination, the async-failures queue.
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Archive, EventBus, type EventPattern, type IEventBus, Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { BUS_RULES, type BusRule } from '../../shared/events/bus-rules.ts';
import type { EventPattern as SharedPattern } from '../../shared/events/pattern-match.ts';

/** EventBridge retries a failed delivery with backoff for this long / this often, then dead-letters it. */
export const TARGET_RETRY = { attempts: 8, maxEventAge: Duration.hours(6) } as const;
/** Lambda's own retries of an event its function failed, and how long it keeps trying, before the destination. */
export const ASYNC_RETRY = { attempts: 2, maxEventAge: Duration.hours(6) } as const;
/** Dead letters are kept for two weeks: long enough to notice the alarm, look, fix, and redrive. */
const DLQ_RETENTION = Duration.days(14);

export interface CairnEventsProps {
  readonly stage: string;
  readonly archiveRetentionDays: number;
}

export type BusTargets = Partial<Readonly<Record<BusRule['target'], IFunction>>>;

export class CairnEvents extends Construct {
  readonly bus: IEventBus;
  readonly archive: Archive;
  /** Where every rule target's undeliverable events go. */
  readonly deadLetters: Queue;
  /**
   * The on-failure destination of every function a rule targets: the invocation records (the event, the error) of
   * events the function failed after Lambda's async retries — a replan or an invalidation that did not happen.
   */
  readonly asyncFailures: Queue;
  readonly rules: Rule[] = [];
  private readonly asyncConfigured = new Set<IFunction>();

  constructor(scope: Construct, id: string, props: CairnEventsProps) {
    super(scope, id);
    this.bus = new EventBus(this, 'Bus', { eventBusName: `cairn-${props.stage}` });
    this.archive = new Archive(this, 'Archive', {
      sourceEventBus: this.bus,
      archiveName: `cairn-${props.stage}`,
      description: `Everything published on the cairn-${props.stage} bus, for replay`,
      eventPattern: { account: [Stack.of(this).account] },
      retention: Duration.days(props.archiveRetentionDays),
    });
    this.deadLetters = new Queue(this, 'TargetDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: DLQ_RETENTION,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.asyncFailures = new Queue(this, 'AsyncFailures', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: DLQ_RETENTION,
      removalPolicy: RemovalPolicy.DESTROY,
    });
  }

  /** `fn` is invoked asynchronously: what it fails for good goes to the async-failures queue (once per function). */
  private sendFailuresOf(fn: IFunction): void {
    if (this.asyncConfigured.has(fn)) return;
    this.asyncConfigured.add(fn);
    fn.configureAsyncInvoke({
      onFailure: new SqsDestination(this.asyncFailures),
      retryAttempts: ASYNC_RETRY.attempts,
      maxEventAge: ASYNC_RETRY.maxEventAge,
    });
  }

  /**
   * A BUS_RULES entry on this bus, targeting `fn` with the retry policy and the dead-letter queue; `fn` gets the
   * async-failures queue as its on-failure destination.
   */
  addRule(rule: BusRule, fn: IFunction): Rule {
    this.sendFailuresOf(fn);
    const created = new Rule(this, rule.name, {
      eventBus: this.bus,
      description: rule.description,
      eventPattern: toCdkPattern(rule.pattern),
      targets: [
        new LambdaFunction(fn, {
          deadLetterQueue: this.deadLetters,
          retryAttempts: TARGET_RETRY.attempts,
          maxEventAge: TARGET_RETRY.maxEventAge,
        }),
      ],
    });
    this.rules.push(created);
    return created;
  }

  /** Every shared rule whose target function exists; the others wait until their function is deployed. */
  addBusRules(targets: BusTargets, rules: readonly BusRule[] = BUS_RULES): Rule[] {
    return rules.flatMap((rule) => {
      const fn = targets[rule.target];
      return fn === undefined ? [] : [this.addRule(rule, fn)];
    });
  }
}

const TOP_LEVEL: Readonly<Record<string, keyof EventPattern>> = {
  source: 'source',
  'detail-type': 'detailType',
  detail: 'detail',
  account: 'account',
  region: 'region',
  resources: 'resources',
  id: 'id',
  time: 'time',
  version: 'version',
};

/** The shared pattern (EventBridge JSON field names) in CDK's shape; the synthesized rule carries it unchanged. */
export function toCdkPattern(pattern: SharedPattern): EventPattern {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(pattern)) {
    const key = TOP_LEVEL[field];
    if (key === undefined) throw new Error(`bus rule pattern: unsupported top-level field "${field}"`);
    out[key] = value;
  }
  return out as EventPattern;
}

/**
 * The outbox redrive, deployed: what the table's stream failed to relay is relayed again, without a write on the
 * step's path. The event source mapping sends the coordinates of each batch it gave up on to its on-failure queue;
 * every few minutes (a schedule of the outbox Lambda) this takes those messages, reads each batch's records back from
 * the stream (which keeps them 24 hours), hands them to the same consumer the stream does (the expiry purge and the
 * relay: published, recorded in the audit log, whose keys make a repeat a no-op), and deletes the message only then.
 *
 * A batch that fails again stays in the queue (its message comes back after the hiding time) for the next pass. One
 * the stream no longer holds, or a message that names no batch, cannot be redriven by anyone: it is reported loudly
 * (the `OutboxDeadLettersStuck` metric and an error log) and left in the queue, whose alarm a person answers
 * (docs/deploy.md).
 */
import { isStreamRecordsExpiredError } from '../../errors.ts';
import { pastRetention, streamBatchOf } from '../../events/stream-dead-letter.ts';
import { METRIC_NAMES, type MetricsSink, NO_METRICS } from '../../ports/metrics.ts';
import type { DeadLetter, OutboxDeadLetters } from '../../ports/outbox-redrive.ts';
import type { StreamBatchConsumer } from './stream-batch.ts';

/** How often the redrive runs (the outbox Lambda's schedule). */
export const REDRIVE_EVERY_SECONDS = 300;
/** Messages one pass takes at most: a pass ends well inside its Lambda's timeout; the next takes the rest. */
const LETTERS_PER_PASS = 20;
/** Messages per receive (SQS's own maximum). */
const RECEIVE_BATCH = 10;
/**
 * A received message stays hidden this long: longer than a pass may run (the outbox Lambda's 60 s), so no other pass
 * takes it meanwhile, and short enough that one this pass kept is back for the next.
 */
export const REDRIVE_HIDE_SECONDS = 120;

export interface OutboxRedriveDeps extends OutboxDeadLetters {
  readonly consume: StreamBatchConsumer;
  readonly clock: () => Date;
  readonly metrics?: MetricsSink;
  /** Where a dead letter that stays is reported (`error`), and a batch that failed again (`warn`); default: console. */
  readonly log?: RedriveLog;
}

type LogLine = (message: string, context: Readonly<Record<string, unknown>>) => void;
export interface RedriveLog {
  readonly error: LogLine;
  readonly warn: LogLine;
}

export interface RedriveReport {
  /** Messages taken from the queue this pass. */
  readonly letters: number;
  /** Batches read back, relayed and deleted from the queue. */
  readonly redriven: number;
  readonly announcements: number;
  readonly events: number;
  /** Messages whose records the stream no longer holds: left in the queue, reported. */
  readonly expired: number;
  /** Messages that name no stream batch: left in the queue, reported. */
  readonly unreadable: number;
  /** Batches that failed again: left for the next pass. */
  readonly failed: number;
}

export interface OutboxRedrive {
  redrive(): Promise<RedriveReport>;
}

type Outcome =
  | { readonly kind: 'redriven'; readonly announcements: number; readonly events: number }
  | { readonly kind: 'expired' | 'unreadable' | 'failed' };

export function createOutboxRedrive(deps: OutboxRedriveDeps): OutboxRedrive {
  const metrics = deps.metrics ?? NO_METRICS;
  const log: RedriveLog = deps.log ?? {
    error: (message, context) => console.error(message, context),
    warn: (message, context) => console.warn(message, context),
  };
  const stuck = (reason: 'expired' | 'unreadable', letter: DeadLetter, context: Record<string, unknown>): void => {
    metrics.count(METRIC_NAMES.outboxDeadLettersStuck, 1, { reason });
    log.error(`cairn outbox redrive: a dead letter cannot be redriven (${reason}); it stays in the queue`, {
      messageId: letter.messageId,
      ...context,
    });
  };

  const redriveOne = async (letter: DeadLetter): Promise<Outcome> => {
    const parsed = streamBatchOf(letter.body);
    if (!parsed.ok) {
      stuck('unreadable', letter, { reason: parsed.reason });
      return { kind: 'unreadable' };
    }
    const { batch } = parsed;
    if (pastRetention(batch, deps.clock())) {
      stuck('expired', letter, { batch });
      return { kind: 'expired' };
    }
    try {
      const records = await deps.stream.read(batch);
      const relayed = await deps.consume(records);
      await deps.queue.delete(letter);
      metrics.count(METRIC_NAMES.outboxRedriven, 1);
      return { kind: 'redriven', announcements: relayed.announcements, events: relayed.events };
    } catch (error) {
      if (isStreamRecordsExpiredError(error)) {
        stuck('expired', letter, { batch, error: error.toJSON() });
        return { kind: 'expired' };
      }
      // Throttled, timed out, the bus down: the message comes back after its hiding time, for the next pass.
      log.warn('cairn outbox redrive: a batch failed again; the next pass retries it', {
        messageId: letter.messageId,
        batch,
        error: String(error),
      });
      return { kind: 'failed' };
    }
  };

  return {
    async redrive() {
      const totals = { letters: 0, redriven: 0, announcements: 0, events: 0, expired: 0, unreadable: 0, failed: 0 };
      while (totals.letters < LETTERS_PER_PASS) {
        const letters = await deps.queue.receive(
          Math.min(RECEIVE_BATCH, LETTERS_PER_PASS - totals.letters),
          REDRIVE_HIDE_SECONDS,
        );
        if (letters.length === 0) break;
        totals.letters += letters.length;
        // One at a time: a batch's records are read and relayed in stream order, and a pass stays small.
        for (const letter of letters) {
          const outcome = await redriveOne(letter);
          if (outcome.kind === 'redriven') {
            totals.redriven += 1;
            totals.announcements += outcome.announcements;
            totals.events += outcome.events;
          } else totals[outcome.kind] += 1;
        }
      }
      return totals;
    },
  };
}

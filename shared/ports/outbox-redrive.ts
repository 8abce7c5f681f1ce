/**
 * What the deployed outbox redrive reads (shared/services/outbox/redrive.ts). A stream batch the relay gave up on is
 * not kept whole anywhere: the event source mapping's on-failure destination (an SQS queue) receives only its
 * coordinates, and the table's stream holds the records themselves for 24 hours. So the redrive takes the
 * coordinates from the queue and reads the records back from the stream.
 */
import type { StreamRecord } from '../events/outbox.ts';
import type { StreamBatch } from '../events/stream-dead-letter.ts';

export type { StreamBatch };

/** One message of the on-failure queue, as received: its body is parsed by the redrive (events/stream-dead-letter.ts). */
export interface DeadLetter {
  readonly messageId: string;
  /** What deleting this receipt of the message takes. */
  readonly receipt: string;
  readonly body: string;
}

export interface DeadLetterQueue {
  /** Up to `max` messages, hidden from other receivers for `hideSeconds` (a message not deleted comes back then). */
  receive(max: number, hideSeconds: number): Promise<readonly DeadLetter[]>;
  delete(letter: DeadLetter): Promise<void>;
}

export interface StreamBatchReader {
  /**
   * The batch's records, in stream order (every write of the shard in that range, not only the ones the mapping's
   * filter passed). Throws `StreamRecordsExpiredError` when the stream no longer holds them.
   */
  read(batch: StreamBatch): Promise<readonly StreamRecord[]>;
}

/** The deployed redrive's two sources. */
export interface OutboxDeadLetters {
  readonly queue: DeadLetterQueue;
  readonly stream: StreamBatchReader;
}

/**
 * The embedded stack's change stream: the store adapter hands over each announcing write as it lands (the same
 * record shape DynamoDB Streams deliver), and this passes them to the relay in batches, in write order, a moment
 * later (as a stream does). A batch that fails is tried again, as a stream's batch is; one that still fails after its
 * tries is not dropped but kept in the journal (in memory, and in the data directory when there is one:
 * infra/local/outbox-journal.ts), and `redrive` relays what the journal holds again: the embedded runtime does so
 * periodically (infra/local/outbox-sweep.ts), as the deployed redrive reads the on-failure queue.
 */
import type { StreamRecord } from '../../events/outbox.ts';

export interface LocalOutboxStream {
  /** The store adapter's stream hook. */
  readonly accept: (record: StreamRecord) => void;
  /** Resolves when every record accepted so far has been relayed or kept (tests, shutdown). */
  drain(): Promise<void>;
  /** Relays each batch the journal keeps once more; a batch relayed leaves the journal, one that fails stays. */
  redrive(): Promise<LocalRedriveReport>;
}

export interface LocalRedriveReport {
  /** Batches the journal held when the pass began. */
  readonly found: number;
  readonly relayed: number;
  readonly failed: number;
}

/** A batch the stream gave up on, until a redrive relays it. */
export interface KeptBatch {
  readonly id: string;
  readonly records: readonly StreamRecord[];
}

/** Where the stream keeps what its relay failed. */
export interface OutboxJournal {
  /** The batches kept and not yet relayed, oldest first. */
  kept(): readonly KeptBatch[];
  keep(batch: KeptBatch): void;
  relayed(id: string): void;
}

export function createMemoryOutboxJournal(initial: readonly KeptBatch[] = []): OutboxJournal {
  const batches = new Map(initial.map((batch) => [batch.id, batch]));
  return {
    kept: () => [...batches.values()],
    keep: (batch) => {
      batches.set(batch.id, batch);
    },
    relayed: (id) => {
      batches.delete(id);
    },
  };
}

/** The relay as the stream sees it (services/outbox/relay.ts). */
export interface StreamConsumer {
  relay(records: readonly StreamRecord[]): Promise<unknown>;
}

export interface LocalOutboxStreamOptions {
  /** Default: in memory. */
  readonly journal?: OutboxJournal;
  /** Tries of a batch before it is kept (default 5). */
  readonly tries?: number;
  readonly onError?: (error: unknown) => void;
}

/** A stream batch holds at most this many records (the deployed event source mapping's batch size). */
const BATCH_SIZE = 100;
const DEFAULT_TRIES = 5;

export function createLocalOutboxStream(
  relay: StreamConsumer,
  options: LocalOutboxStreamOptions = {},
): LocalOutboxStream {
  const journal = options.journal ?? createMemoryOutboxJournal();
  const tries = options.tries ?? DEFAULT_TRIES;
  const onError =
    options.onError ??
    ((error: unknown) =>
      process.stderr.write(`cairn: relaying the outbox failed; the batch is kept for a redrive: ${String(error)}\n`));
  const inFlight = new Set<Promise<void>>();
  let queued: StreamRecord[] = [];
  let kept = 0;
  const deliver = async (records: readonly StreamRecord[]): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await relay.relay(records);
        return;
      } catch (error) {
        if (attempt >= tries) {
          kept += 1;
          journal.keep({ id: `${Date.now().toString(36)}-${kept}`, records });
          onError(error);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
      }
    }
  };
  const track = (work: Promise<void>): void => {
    const tracked = work.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };
  // Records that land in the same turn of the event loop travel as one batch, in write order, as a stream's do.
  const flush = async (): Promise<void> => {
    await new Promise((resolve) => setImmediate(resolve));
    const batch = queued;
    queued = [];
    for (let i = 0; i < batch.length; i += BATCH_SIZE) await deliver(batch.slice(i, i + BATCH_SIZE));
  };
  return {
    accept(record) {
      queued.push(record);
      if (queued.length === 1) track(flush());
    },
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    async redrive() {
      const batches = journal.kept();
      let relayed = 0;
      // One try each, oldest first: a batch that fails again stays for the next pass.
      for (const batch of batches) {
        try {
          await relay.relay(batch.records);
          journal.relayed(batch.id);
          relayed += 1;
        } catch (error) {
          onError(error);
        }
      }
      return { found: batches.length, relayed, failed: batches.length - relayed };
    },
  };
}

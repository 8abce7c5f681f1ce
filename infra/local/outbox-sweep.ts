/**
 * The outbox redrive, embedded: the deployed schedule's periodic pass as a timer of the local runtime. It relays
 * again the stream batches the in-process stream kept after its tries (its journal; on a data directory, also the
 * ones kept before a restart). A pass never overlaps the one before it, and closing waits for the pass under way.
 * `startLocalOutbox` puts the stream, its journal and this sweep together for the local runtime (boot.ts).
 */
import { join } from 'node:path';
import {
  createLocalOutboxStream,
  type LocalOutboxStream,
  type LocalRedriveReport,
} from '../../shared/adapters/local/outbox-stream.ts';
import type { StreamRecord } from '../../shared/events/outbox.ts';
import { REDRIVE_EVERY_SECONDS } from '../../shared/services/outbox/redrive.ts';
import type { OutboxRelay } from '../../shared/services/outbox/relay.ts';
import type { LocalHandler } from './local-executions.ts';
import { openOutboxJournal } from './outbox-journal.ts';

export interface OutboxSweep {
  /** One pass now (after the one under way, if any). */
  sweep(): Promise<LocalRedriveReport>;
  close(): Promise<void>;
}

export interface OutboxSweepOptions {
  /** Between two passes; 0: no timer (passes only when `sweep` is called). */
  readonly everyMs: number;
  readonly onError?: (error: unknown) => void;
}

export function startOutboxSweep(stream: Pick<LocalOutboxStream, 'redrive'>, options: OutboxSweepOptions): OutboxSweep {
  const onError =
    options.onError ?? ((error) => process.stderr.write(`cairn: the outbox redrive failed: ${String(error)}\n`));
  let last: Promise<unknown> = Promise.resolve();
  let closed = false;
  // Chained after the pass before: never two passes at once, whoever asked.
  const pass = (): Promise<LocalRedriveReport> => {
    const next = last.then(() => stream.redrive());
    last = next.catch(() => undefined);
    return next;
  };
  const timer =
    options.everyMs > 0
      ? setInterval(() => {
          if (!closed) pass().catch(onError);
        }, options.everyMs)
      : undefined;
  // The timer alone keeps no process alive: a stack is stopped by close.
  timer?.unref();
  return {
    sweep: pass,
    async close() {
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      await last;
    },
  };
}

export interface LocalOutbox {
  readonly stream: LocalOutboxStream;
  readonly sweep: OutboxSweep;
  /** Stops the sweep (after its pass under way), waits for the stream, closes the journal. */
  close(): Promise<void>;
}

export interface LocalOutboxOptions {
  readonly relay: Pick<OutboxRelay, 'relay'>;
  /** How the runtime calls the relay, as the Outbox Lambda (a test's wrapper, the account's quotas). */
  readonly wrap: (handler: LocalHandler) => LocalHandler;
  /** The data directory: the journal of kept batches lives there (absent: in memory). */
  readonly dataDir?: string | undefined;
  /** Between two sweeps (default REDRIVE_EVERY_SECONDS; 0: only on demand). */
  readonly everyMs?: number | undefined;
}

export function startLocalOutbox(options: LocalOutboxOptions): LocalOutbox {
  // The stream batches the relay failed on every try, until a redrive relays them (the deployed on-failure queue).
  const journal = options.dataDir === undefined ? undefined : openOutboxJournal(join(options.dataDir, 'outbox.jsonl'));
  const relay = options.wrap((records) => options.relay.relay(records as readonly StreamRecord[]));
  const stream = createLocalOutboxStream({ relay }, journal === undefined ? {} : { journal });
  const sweep = startOutboxSweep(stream, { everyMs: options.everyMs ?? REDRIVE_EVERY_SECONDS * 1000 });
  return {
    stream,
    sweep,
    async close() {
      await sweep.close();
      await stream.drain();
      journal?.close();
    },
  };
}

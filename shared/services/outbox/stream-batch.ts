/**
 * What one batch of the table's stream asks of the outbox Lambda, whoever hands it over (the event source mapping,
 * or the redrive reading a batch the mapping gave up on back from the stream): first the runs TTL removed have the
 * rest of what they held deleted, then the batch's announcements are relayed. A failure throws, and the whole batch
 * comes again; both halves take a repeat as a no-op.
 */
import { expiredRunOf } from '../../events/expired-runs.ts';
import type { StreamRecord } from '../../events/outbox.ts';
import type { Retention } from '../../ports/retention.ts';
import type { OutboxRelay } from './relay.ts';

export interface StreamBatchDeps {
  readonly relay: Pick<OutboxRelay, 'relay'>;
  /** Deletes what remains of a run whose item TTL removed (events/expired-runs.ts). */
  readonly retention: Pick<Retention, 'purgeRun'>;
}

export interface StreamBatchOutcome {
  readonly announcements: number;
  readonly events: number;
  readonly expiredRuns: number;
}

export type StreamBatchConsumer = (records: readonly StreamRecord[]) => Promise<StreamBatchOutcome>;

export function createStreamBatchConsumer(deps: StreamBatchDeps): StreamBatchConsumer {
  return async (records) => {
    const expired = records.flatMap((record) => expiredRunOf(record) ?? []);
    for (const run of expired) await deps.retention.purgeRun(run.runId, run.runKey, run.tenant);
    return { ...(await deps.relay.relay(records)), expiredRuns: expired.length };
  };
}

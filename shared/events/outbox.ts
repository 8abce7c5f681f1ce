/**
 * The transactional outbox. A write that changes state and announces it carries its events in the same item, in
 * the `outbox` attribute, so the change and its announcement land together or not at all; a write that announces
 * nothing removes the attribute. The table's change stream then delivers each announcing write at least once to
 * the relay, which publishes the events and keeps the run's audit log.
 *
 * The same filter and transform run on AWS (DynamoDB Streams → the Outbox Lambda) and embedded (the store adapter
 * hands each announcing write to the relay in the same stream shape). Pure: data in, events out.
 */
import type { EventType } from './catalog.ts';

export const OUTBOX_ATTRIBUTE = 'outbox';

/** One event of an announcement, as services build it (the detail is checked against the event catalog's type). */
export interface OutboxEvent {
  readonly type: EventType;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** What one write announces: its events, stamped with when and which run, and an id for dedupe downstream. */
export interface OutboxEntry {
  readonly id: string;
  readonly runId: string;
  readonly at: string;
  readonly events: readonly OutboxEvent[];
  /**
   * Set by the store when the events are too large for the item that announces them (an invalidation of thousands
   * of steps): they are kept out of line, `events` is empty, and `Store.restoreAnnouncements` reads them back by this.
   */
  readonly eventsRef?: string;
}

/** An item image in DynamoDB's attribute-value form; the outbox only reads its one string attribute. */
type Image = Readonly<Record<string, unknown>>;

export const stringAttribute = (image: Image | undefined, name: string): string | undefined => {
  const value = image?.[name];
  const text = typeof value === 'object' && value !== null ? (value as { S?: unknown }).S : undefined;
  return typeof text === 'string' ? text : undefined;
};

/** A change-stream record in the shape DynamoDB Streams (and the embedded store) deliver it. */
export interface StreamRecord {
  readonly eventName?: 'INSERT' | 'MODIFY' | 'REMOVE' | string;
  readonly dynamodb?: {
    readonly Keys?: Image;
    readonly NewImage?: Image;
    readonly OldImage?: Image;
  };
  /** Who made the change: for a TTL deletion, DynamoDB's own service (events/expired-runs.ts). */
  readonly userIdentity?: { readonly type?: string; readonly principalId?: string };
}

/**
 * The event source mapping's filter (Lambda filter criteria syntax): only records whose new image carries an outbox
 * reach the relay, so the table's other writes cost it nothing.
 */
export const OUTBOX_STREAM_FILTER = { dynamodb: { NewImage: { [OUTBOX_ATTRIBUTE]: { S: [{ exists: true }] } } } };

export const encodeOutbox = (entry: OutboxEntry): string => JSON.stringify(entry);

function decode(text: string | undefined): OutboxEntry | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<OutboxEntry>;
    if (typeof value.id !== 'string' || typeof value.runId !== 'string' || typeof value.at !== 'string')
      return undefined;
    if (!Array.isArray(value.events)) return undefined;
    if (value.eventsRef !== undefined && typeof value.eventsRef !== 'string') return undefined;
    return value as OutboxEntry;
  } catch {
    return undefined;
  }
}

/**
 * The announcement a stream record carries, if this write made one: a new image with an outbox whose id the old
 * image did not already hold (a write that kept an old outbox announced nothing new).
 */
export function outboxOf(record: StreamRecord): OutboxEntry | undefined {
  const entry = decode(stringAttribute(record.dynamodb?.NewImage, OUTBOX_ATTRIBUTE));
  if (entry === undefined) return undefined;
  const before = decode(stringAttribute(record.dynamodb?.OldImage, OUTBOX_ATTRIBUTE));
  return before?.id === entry.id ? undefined : entry;
}

/** The events of a batch of stream records, in order, each with its entry (for the audit log and dedupe). */
export function announcementsOf(records: readonly StreamRecord[]): OutboxEntry[] {
  const entries: OutboxEntry[] = [];
  for (const record of records) {
    const entry = outboxOf(record);
    if (entry) entries.push(entry);
  }
  return entries;
}

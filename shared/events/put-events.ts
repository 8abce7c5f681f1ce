/**
 * EventBridge's PutEvents limits and how cairn's publishers fill requests under them. A request takes at most 10
 * entries, and their sizes added up must stay within 256 KB: EventBridge refuses a request over either limit whole
 * (a ValidationException, none of its entries put), so a publisher that split only by count would lose ten events
 * for the sake of one large one, or for ten that each fit alone. An entry's size is AWS's documented calculation
 * ("Calculating Amazon EventBridge PutEvents event entry size"): the UTF-8 bytes of Source, DetailType, Detail and
 * each of Resources, plus 14 for a Time; the bus name is not counted.
 *
 * The deployed publisher (adapters/aws/eventbridge-publisher.ts) and the embedded bus (infra/local/bus-limits.ts)
 * fill requests with the same function, so a test on the embedded stack sees the requests AWS would get.
 */
import { EventTooLargeError } from '../errors.ts';

export interface PutEventsLimits {
  /** Entries per request. */
  readonly entries: number;
  /** The entries' sizes added up, per request (and so the size of one entry). */
  readonly bytes: number;
}

export const PUT_EVENTS_LIMITS: PutEventsLimits = Object.freeze({ entries: 10, bytes: 262_144 });

/** The fields of a PutEvents request entry that count against the limit, as the SDK takes them. */
export interface PutEventsEntry {
  readonly Source: string;
  readonly DetailType: string;
  readonly Detail?: string | undefined;
  readonly Resources?: readonly string[] | undefined;
  readonly Time?: Date | undefined;
}

/** UTF-8 bytes of a string, without encoding it (a lone surrogate counts as U+FFFD's 3 bytes, as encoders write it). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** An entry's size as EventBridge computes it against the request's limit. */
export const putEventsEntryBytes = (entry: PutEventsEntry): number =>
  (entry.Time === undefined ? 0 : 14) +
  utf8Bytes(entry.Source) +
  utf8Bytes(entry.DetailType) +
  (entry.Detail === undefined ? 0 : utf8Bytes(entry.Detail)) +
  (entry.Resources ?? []).reduce((sum, resource) => sum + utf8Bytes(resource), 0);

/** What a publisher sends: requests within both limits, in order, and the entries no request could take. */
export interface PutEventsRequests<T> {
  readonly requests: readonly (readonly T[])[];
  readonly oversized: readonly { readonly entry: T; readonly bytes: number }[];
}

/**
 * Fills requests in order, each with as many entries as fit both limits. An entry over the size limit on its own
 * goes to `oversized` instead of into a request: no request could carry it, and the others must not fail with it.
 */
export function putEventsRequests<T>(
  entries: readonly T[],
  sizeOf: (entry: T) => number,
  limits: PutEventsLimits = PUT_EVENTS_LIMITS,
): PutEventsRequests<T> {
  const requests: T[][] = [];
  const oversized: { entry: T; bytes: number }[] = [];
  let current: T[] = [];
  let currentBytes = 0;
  for (const entry of entries) {
    const bytes = sizeOf(entry);
    if (bytes > limits.bytes) {
      oversized.push({ entry, bytes });
      continue;
    }
    if (current.length === limits.entries || currentBytes + bytes > limits.bytes) {
      requests.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(entry);
    currentBytes += bytes;
  }
  if (current.length > 0) requests.push(current);
  return { requests, oversized };
}

/** A domain event as publishers take it (ports/events.ts's DomainEvent). */
interface PublishedEvent {
  readonly detailType: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** One request's worth of events, each with the entry that carries it. */
export type PutEventsRequest<E> = readonly { readonly event: E; readonly entry: PutEventsEntry }[];

/**
 * Publishes events in requests filled by `putEventsRequests`, one `send` per request in order. Events over the limit
 * alone are left out, and once every other request is sent, an `EventTooLargeError` names them (with their run).
 */
export async function putInRequests<E extends PublishedEvent>(
  events: readonly E[],
  source: string,
  send: (request: PutEventsRequest<E>) => Promise<void>,
  limits: PutEventsLimits = PUT_EVENTS_LIMITS,
): Promise<void> {
  const entries = events.map((event) => ({
    event,
    entry: { Source: source, DetailType: event.detailType, Detail: JSON.stringify(event.detail) },
  }));
  const { requests, oversized } = putEventsRequests(entries, (e) => putEventsEntryBytes(e.entry), limits);
  for (const request of requests) await send(request);
  if (oversized.length > 0)
    throw new EventTooLargeError(
      oversized.map(({ entry, bytes }) => ({
        detailType: entry.event.detailType,
        runId: entry.event.detail.runId,
        bytes,
      })),
      limits.bytes,
    );
}

/**
 * DynamoDB's throughput per partition, as an on-demand table has it: at most 1,000 write units and 3,000 read units
 * a second for the items of one partition key, whatever the table as a whole could take. Units are counted as
 * DynamoDB bills them: a write unit per 1 KB of the item written (rounded up), a read unit per 4 KB read strongly
 * consistently, half that eventually consistently.
 *
 * A request's units are known only once it ran (the item's size before and after an update, a query's items), so
 * each key has a balance that is charged after the fact and refills at the key's rate, up to one second's worth:
 * a request is admitted while its key's balance is above zero, and a key that went into debt is throttled until
 * the refill pays it back. Over time a hot key gets its rate, no more.
 */

export const WRITE_UNIT_BYTES = 1024;
export const READ_UNIT_BYTES = 4096;

/** Write units of an item of `bytes`: one per KB begun, at least one. */
export const writeUnits = (bytes: number): number => Math.max(1, Math.ceil(bytes / WRITE_UNIT_BYTES));

/** Read units of `bytes` read at once (an item, or a query's items together): one per 4 KB begun, halved if eventual. */
export const readUnits = (bytes: number, consistent: boolean): number =>
  Math.max(1, Math.ceil(bytes / READ_UNIT_BYTES)) * (consistent ? 1 : 0.5);

export type UnitKind = 'read' | 'write';

export interface PartitionThroughputOptions {
  readonly readUnitsPerSecond: number;
  readonly writeUnitsPerSecond: number;
  /** Milliseconds (default `performance.now`). */
  readonly now?: () => number;
}

export interface PartitionThroughput {
  /** Whether a request of this kind on this key is taken now (its balance is above zero). */
  admits(kind: UnitKind, key: string): boolean;
  /** Charges units a request on the key consumed. */
  charge(kind: UnitKind, key: string, units: number): void;
  /** The key's balance now (a full key: one second's units). */
  balance(kind: UnitKind, key: string): number;
  /** Keys with a balance below full (what is kept; full keys are forgotten). */
  tracked(): number;
}

interface Balance {
  level: number;
  at: number;
}

/** Keys kept before the full ones are swept out, and charges between two sweeps (a sweep visits every key). */
const SWEEP_AT = 4096;
const SWEEP_EVERY = 1024;

export function createPartitionThroughput(options: PartitionThroughputOptions): PartitionThroughput {
  const now = options.now ?? (() => performance.now());
  const rates: Record<UnitKind, number> = {
    read: options.readUnitsPerSecond,
    write: options.writeUnitsPerSecond,
  };
  for (const [kind, rate] of Object.entries(rates))
    if (!(rate > 0)) throw new RangeError(`${kind} units per second must be positive, got ${rate}`);
  const balances: Record<UnitKind, Map<string, Balance>> = { read: new Map(), write: new Map() };
  let sinceSweep = 0;

  const level = (kind: UnitKind, key: string, time: number): number => {
    const entry = balances[kind].get(key);
    if (entry === undefined) return rates[kind];
    return Math.min(rates[kind], entry.level + (Math.max(0, time - entry.at) / 1000) * rates[kind]);
  };

  const sweep = (kind: UnitKind, time: number): void => {
    for (const key of [...balances[kind].keys()]) if (level(kind, key, time) >= rates[kind]) balances[kind].delete(key);
  };

  return {
    admits: (kind, key) => level(kind, key, now()) > 0,
    charge(kind, key, units) {
      const time = now();
      const map = balances[kind];
      map.set(key, { level: level(kind, key, time) - units, at: time });
      sinceSweep += 1;
      if (map.size > SWEEP_AT && sinceSweep >= SWEEP_EVERY) {
        sinceSweep = 0;
        sweep(kind, time);
      }
    },
    balance: (kind, key) => level(kind, key, now()),
    tracked: () => balances.read.size + balances.write.size,
  };
}

/**
 * How many partitions a run's step items are spread over (the run record's `stepShards`), chosen once, when the run
 * starts, from its plan's size. DynamoDB takes at most 1,000 write units and 3,000 read units a second per partition
 * key: adaptive capacity may isolate hot items and split a key's items over time, but promises nothing for a burst,
 * and each partition stays capped. A release writes every dependent it starts in one batch, and each started step's
 * execution reads its item.
 * Up to 256 steps a partition, so even a whole partition started at once at 2 units a step stays near half of one
 * second's writes; a power of two up to 16 (a 2,000-wide layer is then 125 steps a partition). A run of up to 256
 * steps keeps them in its own partition, as before, and one query reads them.
 */

/** The most steps one partition of a run is planned to hold. */
export const STEPS_PER_PARTITION = 256;
/** The most partitions a run's steps are spread over (table-layout.ts reads them all when it purges a run). */
export const MAX_STEP_PARTITIONS = 16;

/** The partitions of a run of `steps` executable steps: 1 (its own, left unrecorded), else 2, 4, 8 or 16. */
export function stepPartitionsFor(steps: number): number {
  let shards = 1;
  while (shards < MAX_STEP_PARTITIONS && steps > shards * STEPS_PER_PARTITION) shards *= 2;
  return shards;
}

/**
 * Retention: an ended run's records are kept for the configured time after it ends, then go. Only the run's own
 * item carries the expiry (stamped by the write that ends the run); everything else of the run goes with it. The
 * deployed table's TTL deletes the run item and the table's stream hands the removal to `purgeRun`; the embedded
 * runtime, whose dynalite has no TTL, sweeps expired items itself and calls it the same way
 * (infra/local/retention-sweep.ts).
 */
export interface Retention {
  /**
   * Deletes what remains of a run whose item expired: its partition, its blob parts, approvals, watches and run key
   * (`runKey`, the idempotency key its item named, of its `tenant`: absent, the default tenant). Repeating it is
   * harmless. Answers how many items it deleted.
   */
  purgeRun(runId: string, runKey: string | undefined, tenant?: string): Promise<number>;
}

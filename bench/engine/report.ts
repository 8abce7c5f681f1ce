/** The bench's output: one line per workload as it ends, then a table of every measure against its target. */
export interface Units {
  readonly stateTransitions: number;
  readonly lambda: number;
  readonly lambdaBy: Readonly<Record<string, number>>;
  readonly writes: number;
  /** The outbox relay's audit-log batch writes (off the step's path). */
  readonly auditWrites: number;
  readonly reads: number;
  readonly readItems: number;
  /** Bytes of the items read, as DynamoDB sizes them. */
  readonly readBytes: number;
  /** Plan revision items read. */
  readonly planReads: number;
  /** Commands sent to runs' mailboxes (deployed: SQS SendMessage). */
  readonly sends: number;
  /** Batches the deciders took from their mailboxes (deployed: SQS receives, one decider invocation each). */
  readonly batches: number;
  /**
   * CPU time of this process (the whole embedded stack but the expression worker processes), user + system, in ms:
   * a cost that a busy machine distorts far less than wall time.
   */
  readonly cpuMs: number;
}

export interface Row {
  readonly workload: string;
  readonly metric: string;
  readonly value: number;
  readonly unit: string;
  readonly target: { readonly op: '≤' | '≥'; readonly value: number };
  /** Why the row misses whatever its value (a run that did not complete). */
  readonly broken?: string;
}

export const fmt = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : String(n));

export const passes = (row: Row): boolean =>
  row.broken === undefined &&
  Number.isFinite(row.value) &&
  (row.target.op === '≤' ? row.value <= row.target.value : row.value >= row.target.value);

/** Per step, in the order state transitions, Lambda invocations, DynamoDB writes, DynamoDB reads (items). */
export function perStep(units: Units, steps: number): string {
  const d = (n: number) => fmt(n / steps);
  return `${d(units.stateTransitions)} st, ${d(units.lambda)} λ, ${d(units.writes)} w (+${d(units.auditWrites)} audit-log batch), ${d(units.reads)} r (${d(units.readItems)} items), cpu ${d(units.cpuMs)} ms`;
}

const digitsOf = (row: Row): number =>
  row.unit === 'ratio' ? 3 : row.unit === 'ms/step' ? 1 : row.unit === 'steps/s' || row.unit === 'units' ? 0 : 2;

export function table(rows: readonly Row[]): string {
  const header = ['workload', 'measure', 'value', 'target', 'result'];
  const body = rows.map((row) => [
    row.workload,
    row.metric,
    `${fmt(row.value, digitsOf(row))} ${row.unit}`,
    `${row.target.op} ${row.target.value}`,
    passes(row) ? 'pass' : row.broken ? `miss (${row.broken})` : 'miss',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => (cells[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

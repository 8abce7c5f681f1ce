/**
 * The suite's person: one poller over `GET /approvals?status=pending` that answers every approval of the suite's
 * runs, approving or rejecting as `decisionFor` draws it (per run seed, step and generation), after a short delay.
 * A 409 or 410 is a decision that lost (another one won, or the step stopped waiting): counted, not an error.
 */
import type { ApiClient } from './client.ts';
import { decisionFor } from './plan-generator.ts';

interface PendingApproval {
  readonly approvalId: string;
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
}

export interface ApprovalCounts {
  approved: number;
  rejected: number;
  /** Decisions the API refused (409 already decided, 410 expired or no longer waited for). */
  refused: number;
  /** Decisions that failed otherwise (after the client's retries). */
  failed: number;
}

export interface ApprovalResponder {
  /** Answers the approvals of this run from now on, drawn from its seed. */
  watch(runId: string, seed: number): void;
  readonly counts: ApprovalCounts;
  /**
   * Looks for pending approvals now and waits for every decision under way; how many decisions were started since
   * the last call (0: it found nothing to answer, so its decisions start no more work), one more when a page of the
   * pending approvals could not be read.
   */
  flush(): Promise<number>;
  stop(): Promise<void>;
}

export function startApprovalResponder(api: ApiClient, options: { intervalMs?: number } = {}): ApprovalResponder {
  const seeds = new Map<string, number>();
  const handled = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  const counts: ApprovalCounts = { approved: 0, rejected: 0, refused: 0, failed: 0 };
  let stopped = false;
  let started = 0;
  let flushedAt = 0;

  const decide = async (approval: PendingApproval, seed: number) => {
    const { approve, delayMs } = decisionFor(seed, approval.stepId, approval.generation);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    const answer = await api
      .call('POST', `/approvals/${encodeURIComponent(approval.approvalId)}`, {
        decision: approve ? 'approve' : 'reject',
        comment: 'chaos suite',
      })
      .catch(() => ({ status: 0, json: undefined }));
    if (answer.status === 200) counts[approve ? 'approved' : 'rejected'] += 1;
    else if (answer.status === 409 || answer.status === 410) counts.refused += 1;
    else counts.failed += 1;
  };

  /** Answers what is pending now; false when a page could not be read (nothing can be said of what it held). */
  const poll = async (): Promise<boolean> => {
    let cursor: string | undefined;
    do {
      const query = `/approvals?status=pending${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await api.call('GET', query).catch(() => undefined);
      if (page?.status !== 200) return false;
      const { approvals, nextCursor } = page.json as { approvals: PendingApproval[]; nextCursor?: string };
      for (const approval of approvals) {
        const seed = seeds.get(approval.runId);
        if (seed === undefined || handled.has(approval.approvalId)) continue;
        handled.add(approval.approvalId);
        started += 1;
        const task = decide(approval, seed).finally(() => inFlight.delete(task));
        inFlight.add(task);
      }
      cursor = nextCursor;
    } while (cursor !== undefined && !stopped);
    return true;
  };

  const loop = (async () => {
    while (!stopped) {
      await poll();
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
    }
  })();

  return {
    watch: (runId, seed) => {
      seeds.set(runId, seed);
    },
    counts,
    async flush() {
      const read = await poll();
      while (inFlight.size > 0) await Promise.all([...inFlight]);
      const made = started - flushedAt;
      flushedAt = started;
      // An unread page may hold approvals to answer: not quiet.
      return read ? made : made + 1;
    },
    async stop() {
      stopped = true;
      await loop;
      await Promise.all([...inFlight]);
    },
  };
}

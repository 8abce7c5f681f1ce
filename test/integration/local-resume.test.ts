/**
 * The embedded stack on a data directory, stopped with work in flight and booted again on the same directory: a
 * retry in its backoff waits only the rest of it (then runs its next attempt), and a gate still waits on the same approval (same task token, same
 * deadline), which a person can then decide, the run's waiter answering as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../infra/local/boot.ts';
import { DataDirLockedError } from '../../infra/local/data-dir.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { stepExecutionName } from '../../shared/ports/executions.ts';
import { pendingApproval } from '../support/api-reads.ts';
import { plan, statusOf, step, summary, waitForRun } from '../support/local-stack.ts';

/**
 * A retry's backoff, long enough to outlast a stop and a boot (a few seconds) and short enough not to hold the suite:
 * attempt 2 waits exactly this long.
 */
const BACKOFF_SECONDS = 20;

describe('booting again on a data directory with work in flight', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-resume-'));
  const options: LocalStackOptions = {
    dataDir: dir,
    conformance: true,
    demoDelayMs: 0,
    token: 'resume-token',
    retryBaseSeconds: BACKOFF_SECONDS,
  };
  let stack: LocalStack | undefined;
  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits the rest of a backoff and the same approval, then completes on a decision', async () => {
    const first = await startLocalStack(options);
    stack = first;
    await expect(startLocalStack(options)).rejects.toThrow(DataDirLockedError);

    const flaky = await first.startRun({
      plan: plan('retry across a restart', [
        step(first, 'f', T.flaky, { input: { key: `resume-${Date.now()}`, failures: 1 } }),
      ]),
    });
    const gated = await first.startRun({
      plan: plan('approve across a restart', [
        step(first, 'gate', T.approver, { input: {}, approval: { question: 'Go on?', timeoutSeconds: 86_400 } }),
        step(first, 'after', T.echo, { dependsOn: ['gate'], input: { value: 'after' } }),
      ]),
    });
    await waitForRun(first, flaky, (run) => statusOf(run, 'f') === 'retrying');
    const before = await pendingApproval(first, gated);
    await waitForRun(first, gated, (run) => statusOf(run, 'gate') === 'awaiting_approval');
    await first.close();
    stack = undefined;

    const second = await startLocalStack(options);
    stack = second;
    const byName = new Map(second.resumed.executions.map((e) => [e.name, e]));
    const backoff = byName.get(stepExecutionName(flaky, 'f', 1));
    const gate = byName.get(stepExecutionName(gated, 'gate', 1));
    expect(second.resumed.executions.filter((e) => e.machine === 'run')).toHaveLength(2);
    expect(backoff).toMatchObject({ kind: 'wait', state: 'Backoff' });
    // The rest of the backoff, not a new one.
    expect(backoff?.remainingMs).toBeLessThan(BACKOFF_SECONDS * 1000);
    expect(gate).toMatchObject({ kind: 'token', state: 'AwaitDecision' });
    expect(second.resumed.started).toEqual([]);

    const after = await pendingApproval(second, gated);
    expect(after).toEqual(before);
    const decided = await second.request('POST', `/approvals/${encodeURIComponent(after.approvalId)}`, {
      decision: 'approve',
    });
    expect(decided.status).toBe(200);
    const done = await waitForRun(second, gated);
    expect(done.status, summary(done)).toBe('complete');
    // Attempt 2 runs once the rest of the backoff has passed, and succeeds.
    const retried = await waitForRun(second, flaky, undefined, BACKOFF_SECONDS * 1000 + 30_000);
    expect(retried.status, summary(retried)).toBe('complete');
    expect(retried.steps[0]?.attempts).toBe(2);
  }, 300_000);
});

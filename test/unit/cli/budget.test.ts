/**
 * `cairn budget`: the limits named by its flags reach the run's decider as RaiseBudget (with who asked), the answer
 * is printed, a refusal is the API's words with exit 1, and flags that name no limit, or not a number, are bad
 * usage (exit 2) that sends nothing.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../../../shared/cli/main.ts';
import { harness, runRecord, scriptedMailbox } from '../api/harness.ts';
import { served } from './served.ts';

describe('cairn budget', () => {
  it('sends the limits named and prints the run going on', async () => {
    const scripted = scriptedMailbox(() => ({
      ok: true,
      value: { status: 'running', limits: { maxTokens: 5000, maxCostUsd: 2.5, maxReplans: 4 } },
    }));
    const h = await harness({ mailbox: scripted.mailbox });
    await h.store.createRun(runRecord('run-1', { status: 'paused' }));
    const io = await served(h);

    expect(
      await main(['budget', 'run-1', '--max-tokens', '5000', '--max-cost-usd', '2.5', '--max-replans', '4'], io),
    ).toBe(0);

    expect(scripted.asked).toEqual([
      {
        runId: 'run-1',
        command: {
          kind: 'RaiseBudget',
          limits: { maxTokens: 5000, maxCostUsd: 2.5, maxReplans: 4 },
          by: 'local-token',
        },
      },
    ]);
    expect(io.out[0]).toBe(
      'run run-1 is running: limits now maxTokens 5000, maxCostUsd 2.5, maxReplans 4 (cairn status run-1 --watch)\n',
    );
  });

  it("exits 1 with the API's words when the run is not held for a limit", async () => {
    const scripted = scriptedMailbox(() => ({
      ok: false,
      status: 409,
      code: 'E_NOT_HELD_FOR_LIMIT',
      message: 'run run-1 is running: only a run paused for budget_exhausted or max_replans takes larger limits',
    }));
    const h = await harness({ mailbox: scripted.mailbox });
    await h.store.createRun(runRecord('run-1'));
    const io = await served(h);

    expect(await main(['budget', 'run-1', '--max-seconds', '600'], io)).toBe(1);
    expect(io.err.join('')).toContain('E_NOT_HELD_FOR_LIMIT');
  });

  it('refuses flags that name no limit, or not a positive number, sending nothing', async () => {
    const scripted = scriptedMailbox(() => ({ ok: true }));
    const h = await harness({ mailbox: scripted.mailbox });
    const io = await served(h);

    expect(await main(['budget', 'run-1'], io)).toBe(2);
    expect(await main(['budget', 'run-1', '--max-tokens', 'lots'], io)).toBe(2);
    expect(await main(['budget', 'run-1', '--max-replans', '2.5'], io)).toBe(2);
    expect(await main(['budget', 'run-1', '--max-cost-usd', '-1'], io)).toBe(2);
    expect(scripted.asked).toEqual([]);
    expect(io.err.join('')).toContain('name at least one limit');
  });
});

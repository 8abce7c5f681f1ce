/**
 * What the API commands print from the server is text for a terminal, never control: an objective, a question, a
 * tool's error or an API error message carrying ESC/OSC sequences, BEL, CR or bidi overrides shows them escaped.
 */
import { describe, expect, it } from 'vitest';
import { createApproveCommand } from '../../../shared/cli/commands/approve.ts';
import { createRunCommand } from '../../../shared/cli/commands/run.ts';
import { main } from '../../../shared/cli/main.ts';
import { rawControls } from '../../support/raw-controls.ts';
import { approvalRecord, echoStep, gateStep, harness, planOf, seedRun, stepRecord, TOKEN } from '../api/harness.ts';
import { capturing, served } from './served.ts';

/** Sets the window title, rings, rewrites the line from its start and reverses what follows. */
const HOSTILE = 'report\u001b]0;pwned\u0007\u001b[2J\rOK\u202eevil\u009b31m';
const text = (chunks: string[]): string => chunks.join('');

/** A fetch that answers every request with this status and JSON body. */
const answering = (status: number, body: unknown) => async (): Promise<Response> =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('cairn status', () => {
  async function hostileRun() {
    const h = await harness();
    await seedRun(
      h,
      'r1',
      planOf([echoStep('a')], `${HOSTILE}\nrun r2 complete`),
      [stepRecord('r1', 'a', { status: 'failed', attempts: 1, error: { code: 'E_TOOL', message: HOSTILE } })],
      { status: 'failed', terminal: { state: 'failed', reason: `step a failed: ${HOSTILE}`, evidence: {}, at: 'x' } },
    );
    return h;
  }

  it('prints the objective, the terminal reason and a step error with their controls escaped', async () => {
    const io = await served(await hostileRun());
    expect(await main(['status', 'r1'], io)).toBe(0);
    const out = text(io.out);
    expect(rawControls(out)).toEqual([]);
    expect(out).toContain('objective: report\\u001b]0;pwned\\u0007\\u001b[2J OK\\u202eevil\\u009b31m run r2 complete');
    expect(out).toContain('E_TOOL: report\\u001b]0;pwned\\u0007');
    expect(out.trimEnd().split('\n')).toHaveLength(4);
  });

  it('--json prints JSON that parses to the same objective, with no raw control either', async () => {
    const io = await served(await hostileRun());
    expect(await main(['status', 'r1', '--json'], io)).toBe(0);
    expect(rawControls(text(io.out))).toEqual([]);
    expect(JSON.parse(text(io.out)).objective).toBe(`${HOSTILE}\nrun r2 complete`);
  });

  it('--watch prints every line with its controls escaped', async () => {
    const io = await served(await hostileRun());
    expect(await main(['status', 'r1', '--watch', '--interval', '5'], io)).toBe(1);
    const out = text(io.out);
    expect(rawControls(out)).toEqual([]);
    expect(out).toContain('run r1: report\\u001b]0;pwned\\u0007\\u001b[2J\\u000dOK\\u202eevil\\u009b31m\\u000arun r2');
    expect(out.trimEnd().split('\n')).toHaveLength(3);
  });
});

describe('cairn approvals', () => {
  it('prints a question over its own indented lines and every other field on one line, controls escaped', async () => {
    const h = await harness();
    await seedRun(h, 'run-a', planOf([gateStep('gate')]), [stepRecord('run-a', 'gate')]);
    await h.store.putApproval(approvalRecord('ap1', { question: `${HOSTILE}\nSecond line\tof it` }));
    await h.store.putApproval(
      approvalRecord('ap2', {
        status: 'rejected',
        input: { note: HOSTILE },
        upstreamOutputs: { [`x\n${HOSTILE}`]: {} },
        decidedBy: `by\u001b]8;;https://evil.example\u0007`,
        decidedAt: '2030-01-01T00:01:00.000Z',
        comment: `no\n${HOSTILE}`,
      }),
    );
    const io = await served(h);
    expect(await main(['approvals', '--status', 'all'], io)).toBe(0);
    const out = text(io.out);
    expect(rawControls(out)).toEqual([]);
    expect(out).toContain('  question: report\\u001b]0;pwned\\u0007\\u001b[2J\\u000dOK\\u202eevil\\u009b31m\n');
    expect(out).toContain(`\n${' '.repeat(12)}Second line\tof it\n`);
    expect(out).toContain('decided by by\\u001b]8;;https://evil.example\\u0007 at');
    expect(out).toContain(': no\\u000areport\\u001b');
    expect(out).toContain('upstream outputs: x\\u000areport\\u001b');
  });
});

describe('cairn approve, cairn run and API errors', () => {
  const env = { CAIRN_API_URL: 'http://api.test', CAIRN_API_TOKEN: TOKEN };

  it('prints who decided on the answer line with its controls escaped', async () => {
    const approval = { ...approvalRecord('ap1'), status: 'approved', decidedBy: `me\r${HOSTILE}` };
    const io = capturing(env);
    expect(await createApproveCommand({ fetch: answering(200, { approval }) })(['ap1'], io)).toBe(0);
    expect(rawControls(text(io.out))).toEqual([]);
    expect(text(io.out)).toBe(
      'approval ap1 approved by me\\u000dreport\\u001b]0;pwned\\u0007\\u001b[2J\\u000dOK\\u202eevil\\u009b31m (run run-a, step gate)\n',
    );
  });

  it('prints the run id and status the API answered with their controls escaped', async () => {
    const io = capturing(env);
    const run = createRunCommand({ fetch: answering(201, { runId: 'r\u001b[2J', status: `planning\n${HOSTILE}` }) });
    expect(await run(['an', 'objective'], io)).toBe(0);
    expect(rawControls(text(io.out))).toEqual([]);
    expect(text(io.out).trimEnd().split('\n')).toHaveLength(1);
  });

  it('prints an API error message and its details each on one line with their controls escaped', async () => {
    const io = capturing(env);
    const body = { error: { code: 'E_CONFLICT', message: `refused\n${HOSTILE}`, details: [{ message: HOSTILE }] } };
    expect(await createApproveCommand({ fetch: answering(409, body) })(['ap1'], io)).toBe(1);
    const err = text(io.err);
    expect(rawControls(err)).toEqual([]);
    expect(err.trimEnd().split('\n')).toEqual([
      'cairn approve: E_CONFLICT: refused\\u000areport\\u001b]0;pwned\\u0007\\u001b[2J\\u000dOK\\u202eevil\\u009b31m',
      'cairn approve:   report\\u001b]0;pwned\\u0007\\u001b[2J\\u000dOK\\u202eevil\\u009b31m',
    ]);
  });
});

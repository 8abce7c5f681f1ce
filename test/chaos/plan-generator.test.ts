/** The chaos suite's plans and command line: seeded, valid for the validator, and refused when malformed. */
import { describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../../bench/chaos/options.ts';
import { decisionFor, generatePlan, runSeed } from '../../bench/chaos/plan-generator.ts';
import { conformanceCatalog } from '../../shared/capabilities/conformance.ts';
import { loadCatalog } from '../../shared/plan/catalog.ts';
import { validate } from '../../shared/plan/validate.ts';

const catalog = loadCatalog(conformanceCatalog());
const plans = Array.from({ length: 60 }, (_, i) => generatePlan(runSeed(42, i), { namespace: 'test' }));

describe('generatePlan', () => {
  it('draws the same plan and actions from the same seed', () => {
    expect(generatePlan(runSeed(42, 3), { namespace: 'test' })).toEqual(plans[3]);
  });

  it('draws plans the validator accepts, over every shape', () => {
    const invalid = plans
      .map((p) => ({
        seed: p.seed,
        result: validate({ schemaVersion: 1, revision: 1, objective: 'chaos', steps: p.steps }, catalog),
      }))
      .filter((p) => !p.result.valid);

    expect(invalid).toEqual([]);
    expect(new Set(plans.map((p) => p.shape))).toEqual(new Set(['chain', 'fork-join', 'layered', 'random']));
  });

  it('mixes cancels, invalidations and every kind of step', () => {
    const kinds = new Set(plans.flatMap((p) => Object.values(p.kinds)));
    const actions = new Set(plans.flatMap((p) => p.actions.map((a) => a.kind)));

    expect(kinds).toEqual(new Set(['echo', 'sleep', 'ledger', 'flaky', 'fail', 'gate', 'review', 'skipped']));
    expect(actions).toEqual(new Set(['cancel', 'invalidate', 'invalidate-after-finish']));
  });

  it('sends some invalidations by webhook, to a step that watches the resource', () => {
    const invalidations = plans.flatMap((p) =>
      p.actions.flatMap((a) => (a.kind === 'cancel' ? [] : [{ plan: p, action: a }])),
    );
    const byWebhook = invalidations.filter(({ action }) => action.via.kind === 'webhook');

    expect(byWebhook.length).toBeGreaterThan(0);
    expect(byWebhook.length).toBeLessThan(invalidations.length);
    for (const { plan, action } of byWebhook) {
      const watches = plan.steps.find((s) => s.id === action.stepId)?.watches;
      expect(watches).toContain(action.via.kind === 'webhook' ? action.via.resourceKey : undefined);
    }
  });
});

describe('decisionFor', () => {
  it('answers the same approval the same way, and approves most', () => {
    const answers = Array.from({ length: 200 }, (_, i) => decisionFor(7, `s${i}`, 1));

    expect(decisionFor(7, 's1', 1)).toEqual(answers[1]);
    expect(answers.filter((a) => a.approve).length).toBeGreaterThan(120);
    expect(answers.some((a) => !a.approve)).toBe(true);
  });
});

describe('parseCommandLine', () => {
  it('reads the flags, with defaults for the rest', () => {
    const { options, verbose } = parseCommandLine(
      ['--runs', '5', '--faults=store.write:throttle@0.05', '--seed', '9', '--only', '1,3', '--verbose'],
      () => 1,
    );

    expect(options).toMatchObject({
      runs: 5,
      faults: 'store.write:throttle@0.05',
      seed: 9,
      only: [1, 3],
      concurrency: 4,
    });
    expect(verbose).toBe(true);
  });

  it('draws a seed when none is given', () => {
    expect(parseCommandLine([], () => 1234).options.seed).toBe(1234);
  });

  it('reads the retry pause (ms, or the machines own) and reading back under faults', () => {
    expect(parseCommandLine(['--retry-interval-ms', '20', '--read-under-faults'], () => 1).options).toMatchObject({
      retryIntervalMs: 20,
      readUnderFaults: true,
    });
    expect(parseCommandLine(['--retry-interval-ms=asl'], () => 1).options.retryIntervalMs).toBe('asl');
    expect(parseCommandLine([], () => 1).options.retryIntervalMs).toBeUndefined();
    expect(() => parseCommandLine(['--retry-interval-ms', 'soon'], () => 1)).toThrow('--retry-interval-ms must be');
  });

  it('turns the AWS quotas on by default, lowers them by flag, and off with --no-quotas', () => {
    expect(parseCommandLine([], () => 1).options.awsQuotas).toEqual({});
    expect(parseCommandLine(['--lambda-concurrency', '8', '--sfn-start-rate=50'], () => 1).options.awsQuotas).toEqual({
      lambdaConcurrency: 8,
      sfnStartRate: 50,
    });
    expect(parseCommandLine(['--no-quotas'], () => 1).options.awsQuotas).toBe(false);
    expect(() => parseCommandLine(['--no-quotas', '--lambda-concurrency', '8'], () => 1)).toThrow(UsageError);
    expect(() => parseCommandLine(['--lambda-concurrency', '0'], () => 1)).toThrow('--lambda-concurrency must be');
  });

  it('refuses unknown flags, missing values and bad numbers', () => {
    expect(() => parseCommandLine(['--run', '5'], () => 1)).toThrow(UsageError);
    expect(() => parseCommandLine(['--runs'], () => 1)).toThrow('--runs needs a value');
    expect(() => parseCommandLine(['--runs', '0'], () => 1)).toThrow('--runs must be an integer ≥ 1');
    expect(() => parseCommandLine(['--cancel-rate', '2'], () => 1)).toThrow('--cancel-rate must be in 0..1');
  });
});

import { describe, expect, it } from 'vitest';
import {
  closedByEnding,
  generationBefore,
  invalidationScope,
  isStaleAfterChange,
  movesAgain,
  nextGenerations,
  startedByKey,
  unreachableSteps,
  waitingAmiss,
} from '../../../shared/engine/invalidation.ts';
import { buildGraph } from '../../../shared/plan/graph.ts';
import type { StepStatus } from '../../../shared/plan/schema.ts';
import type { StepRecord } from '../../../shared/ports/store.ts';

const s = (id: string, dependsOn: string[] = [], parentId?: string, group = false) => ({
  id,
  dependsOn,
  target: group ? null : 'tool:x',
  ...(parentId === undefined ? {} : { parentId }),
});

// a → w → d → z ; a → e → z ; u alone ; group g (g1 → g2) after w ; after g: h
const graph = buildGraph([
  s('a'),
  s('w', ['a']),
  s('d', ['w']),
  s('e', ['a']),
  s('z', ['d', 'e']),
  s('u'),
  s('g', ['w'], undefined, true),
  s('g1', [], 'g'),
  s('g2', ['g1'], 'g'),
  s('h', ['g']),
]);

const all = (status: StepStatus) => new Map(graph.executableIds().map((id) => [id, status]));

describe('invalidationScope', () => {
  it('takes the step and everything downstream of it, in plan order, and nothing upstream or unrelated', () => {
    expect(invalidationScope(graph, ['w'])).toEqual(['w', 'd', 'z', 'g1', 'g2', 'h']);
    expect(invalidationScope(graph, ['e'])).toEqual(['e', 'z']);
  });

  it('takes every executable step of a group and what waits for the group', () => {
    expect(invalidationScope(graph, ['g'])).toEqual(['g1', 'g2', 'h']);
  });

  it('merges several roots once each and ignores unknown ids', () => {
    expect(invalidationScope(graph, ['z', 'e', 'ghost'])).toEqual(['e', 'z']);
    expect(invalidationScope(graph, ['ghost'])).toEqual([]);
  });
});

describe('nextGenerations', () => {
  it('counts finished upstream steps outside the scope as released and readies what waits for nothing else', () => {
    const next = nextGenerations(graph, ['d', 'z'], all('succeeded'));
    expect(next.get('d')).toEqual({ status: 'ready', upstream: ['w'], remaining: 0, released: ['w'] });
    expect(next.get('z')).toEqual({ status: 'pending', upstream: ['d', 'e'], remaining: 1, released: ['e'] });
  });

  it('does not release upstream steps that have not finished well', () => {
    const statuses = new Map(all('succeeded'));
    statuses.set('e', 'running');
    statuses.set('w', 'failed');
    const next = nextGenerations(graph, ['d', 'z'], statuses);
    expect(next.get('d')).toMatchObject({ status: 'pending', remaining: 1, released: [] });
    expect(next.get('z')).toMatchObject({ status: 'pending', remaining: 2, released: [] });
  });

  it('names the generation each upstream step of the scope moves from stale, and no step outside it', () => {
    const generations = new Map([
      ['d', 1],
      ['z', 4],
      ['e', 2],
    ]);
    const next = nextGenerations(graph, ['d', 'z'], all('succeeded'), generations);
    expect(next.get('z')).toMatchObject({ remaining: 1, released: ['e'], staleReleases: { d: 1 } });
    expect(next.get('d')).not.toHaveProperty('staleReleases');
  });

  it('names the generation before the one an unfinished upstream step outside the scope is in stale', () => {
    const statuses = new Map(all('succeeded'));
    statuses.set('d', 'pending');
    statuses.set('e', 'running');
    const generations = new Map([
      ['d', 2],
      ['e', 1],
      ['w', 3],
    ]);
    // d (generation 2, moved by an earlier invalidation) is waited for in it; e has no earlier generation; w finished.
    expect(nextGenerations(graph, ['z'], statuses, generations).get('z')).toMatchObject({
      remaining: 2,
      released: [],
      staleReleases: { d: 1 },
    });
    expect(nextGenerations(graph, ['d'], statuses, generations).get('d')).not.toHaveProperty('staleReleases');
  });

  it('counts skipped upstream steps as released', () => {
    const statuses = new Map(all('succeeded'));
    statuses.set('e', 'skipped');
    expect(nextGenerations(graph, ['z'], statuses).get('z')).toMatchObject({ remaining: 0, status: 'ready' });
  });
});

type Fresh = Pick<StepRecord, 'generation' | 'status' | 'staleReleases' | 'generationKey'>;

/** Records of `ids` in `generation`, each naming the generation before `upstream` is in stale for its upstream steps. */
function recordsIn(ids: readonly string[], generation: number, upstream: Record<string, number>): [string, Fresh][] {
  const within = [...new Set([...ids, ...Object.keys(upstream)])];
  const before = new Map(Object.entries(upstream).map(([id, g]) => [id, g - 1]));
  const next = nextGenerations(graph, within, all('succeeded'), before);
  return ids.map((id) => {
    const stale = next.get(id)?.staleReleases;
    return [id, { generation, status: 'pending', ...(stale === undefined ? {} : { staleReleases: stale }) }];
  });
}

describe('movesAgain', () => {
  // The invalidation of a (scope a w d e z g1 g2 h) moved a and e; a concurrent one of w started w, d, z, g1, g2 and h
  // first, from a as it was before the move (its scope left a out, and e: it counted both as released).
  const scope = invalidationScope(graph, ['a']);
  const winners = ['w', 'd', 'z', 'g1', 'g2', 'h'];
  const fresh = new Map<string, Fresh>([
    ['a', { generation: 2, status: 'ready' }],
    ['e', { generation: 2, status: 'pending', staleReleases: { a: 1 } }],
    ...recordsIn(winners, 3, Object.fromEntries(winners.map((id) => [id, 3]))),
  ]);

  it('moves again a lost step that waits for a moved step, and what waits for it in the scope', () => {
    const again = movesAgain(graph, scope, all('succeeded'), fresh, winners, new Set(['a', 'e']));

    expect([...again.keys()]).toEqual(['w', 'd', 'z', 'g1', 'g2', 'h']);
    // Upstream steps of the scope are waited for in the generation they are in after the moves: a's 2, w's 4.
    expect(again.get('w')).toMatchObject({ status: 'pending', remaining: 1, staleReleases: { a: 1 } });
    expect(again.get('d')).toMatchObject({ status: 'pending', remaining: 1, staleReleases: { w: 3 } });
    expect(again.get('z')).toMatchObject({ remaining: 2, staleReleases: { d: 3, e: 1 } });
  });

  it("leaves the winner's generations alone when none of them waits for a step this invalidation moved", () => {
    // Nothing of the scope moved by this invalidation: a and e are where the winner found them.
    const unmoved = new Map<string, Fresh>([
      ...fresh,
      ['a', { generation: 1, status: 'succeeded' }],
      ['e', { generation: 1, status: 'succeeded' }],
    ]);
    expect(movesAgain(graph, scope, all('succeeded'), unmoved, winners, new Set()).size).toBe(0);
    expect(movesAgain(graph, scope, all('succeeded'), unmoved, ['w', 'd'], new Set(['e'])).size).toBe(0);
  });

  it("moves a waiting step whose upstream step's planned move never landed, and what waits for it", () => {
    // A repeat: its first try moved every step (to 2), then d and z once more (to 3) with w, whose move failed.
    const repeat = new Map<string, Fresh>([
      ['a', { generation: 2, status: 'ready' }],
      ['e', { generation: 2, status: 'pending', staleReleases: { a: 1 } }],
      ...recordsIn(['w', 'g1', 'g2', 'h'], 2, { a: 2, w: 2, g1: 2, g2: 2 }),
      ['d', { generation: 3, status: 'pending', staleReleases: { w: 2 } }],
      ['z', { generation: 3, status: 'pending', staleReleases: { d: 3, e: 1 } }],
    ]);
    const again = movesAgain(graph, scope, all('succeeded'), repeat, [], new Set(scope));

    expect([...again.keys()]).toEqual(['d', 'z']);
    expect(again.get('d')).toMatchObject({ status: 'pending', remaining: 1, staleReleases: { w: 1 } });
    expect(again.get('z')).toMatchObject({ remaining: 2, staleReleases: { d: 3, e: 1 } });
  });
});

describe('closedByEnding', () => {
  const scope = ['w', 'd', 'z'];
  const fresh = new Map<string, Fresh>([
    ['w', { generation: 2, status: 'cancelled', generationKey: 'k' }],
    ['d', { generation: 2, status: 'pending', generationKey: 'k' }],
    ['z', { generation: 2, status: 'cancelled', generationKey: 'other' }],
    ['u', { generation: 2, status: 'cancelled', generationKey: 'k' }],
  ]);

  it("names the steps of the scope closed `cancelled` in a generation this invalidation's key started", () => {
    expect(closedByEnding(scope, fresh, 'k')).toEqual(['w']);
    expect(closedByEnding(scope, fresh, undefined)).toEqual([]);
  });

  it('moves them again with what waits for them when movesAgain is told the key', () => {
    const again = movesAgain(graph, scope, all('succeeded'), fresh, [], new Set(scope), 'k');
    expect([...again.keys()]).toEqual(['w', 'd', 'z']);
    expect(again.get('d')).toMatchObject({ status: 'pending', staleReleases: { w: 2 } });
    expect(movesAgain(graph, scope, all('succeeded'), fresh, [], new Set(scope)).has('w')).toBe(false);
  });
});

describe('waitingAmiss', () => {
  const scope = ['w', 'd', 'z'];
  const consistent = new Map<string, Fresh>(recordsIn(scope, 2, { w: 2, d: 2, z: 2 }));

  it('is empty when each waiting step waits for the generation its upstream steps of the scope are in', () => {
    expect(waitingAmiss(graph, scope, consistent)).toEqual([]);
    // Upstream steps outside the scope (e) are not looked at, nor is a step never moved (all in generation 1).
    expect(waitingAmiss(graph, scope, new Map(recordsIn(scope, 1, {})))).toEqual([]);
  });

  it("names a step that names its upstream step's current generation stale: it would never be released", () => {
    const ahead = new Map(consistent);
    ahead.set('d', { generation: 3, status: 'pending', staleReleases: { w: 2 } });
    expect(waitingAmiss(graph, scope, ahead)).toEqual(['d', 'z']);
  });

  it('names a step that names an earlier generation stale, or none: it would count a superseded one', () => {
    const behind = new Map(consistent);
    behind.set('w', { generation: 3, status: 'succeeded' });
    expect(waitingAmiss(graph, scope, behind)).toEqual(['d']);
    const none = new Map(consistent);
    none.set('d', { generation: 2, status: 'ready' });
    expect(waitingAmiss(graph, scope, none)).toEqual(['d']);
  });

  it('leaves a step that no longer waits alone', () => {
    const ahead = new Map(consistent);
    for (const status of ['running', 'succeeded', 'blocked'] as const) {
      ahead.set('d', { generation: 2, status, staleReleases: { w: 2 } });
      expect(waitingAmiss(graph, scope, ahead), status).toEqual([]);
    }
  });
});

describe('unreachableSteps', () => {
  it('names the outside failures a step of the scope waits for, directly or through the scope', () => {
    const statuses = new Map(all('succeeded'));
    statuses.set('e', 'failed');
    const stopped = unreachableSteps(graph, ['w', 'd', 'z'], statuses);
    expect([...stopped]).toEqual([['z', ['e']]]);
    statuses.set('a', 'blocked');
    const chained = unreachableSteps(graph, ['w', 'd', 'z'], statuses);
    expect(chained.get('w')).toEqual(['a']);
    expect(chained.get('d')).toEqual(['a']);
    expect(chained.get('z')).toEqual(['a', 'e']);
  });

  it('is empty when everything outside the scope finished well or is still open', () => {
    const statuses = new Map(all('succeeded'));
    statuses.set('e', 'running');
    expect(unreachableSteps(graph, ['w', 'd', 'z'], statuses).size).toBe(0);
  });
});

describe('isStaleAfterChange', () => {
  const ran = { status: 'succeeded' as const, startedAt: '2030-01-01T00:00:10.000Z' };

  it('is stale when the generation began before the change, not when it began after it', () => {
    expect(isStaleAfterChange(ran, '2030-01-01T00:00:20.000Z')).toBe(true);
    expect(isStaleAfterChange(ran, '2030-01-01T00:00:05.000Z')).toBe(false);
  });

  it('reads a time without a fraction as the whole second (EventBridge times)', () => {
    const began = { status: 'running' as const, startedAt: '2030-01-01T00:00:10.400Z' };
    expect(isStaleAfterChange(began, '2030-01-01T00:00:10Z')).toBe(true);
    expect(isStaleAfterChange(began, '2030-01-01T00:00:10.100Z')).toBe(false);
  });

  it('is never stale for a generation that has not run, always without a time for one that has', () => {
    for (const status of ['pending', 'ready', 'blocked', 'cancelled', 'superseded'] as const)
      expect(isStaleAfterChange({ status }, '2030-01-01T00:00:20.000Z'), status).toBe(false);
    expect(isStaleAfterChange(ran)).toBe(true);
    expect(
      isStaleAfterChange({ status: 'skipped', finishedAt: '2030-01-01T00:00:30.000Z' }, '2030-01-01T00:00:20Z'),
    ).toBe(false);
    expect(isStaleAfterChange(ran, 'not a time')).toBe(true);
  });
});

const record = (stepId: string, fields: Partial<StepRecord> = {}): StepRecord => ({
  runId: 'r',
  stepId,
  status: 'ready',
  generation: 2,
  upstream: [],
  remaining: 0,
  released: [],
  attempts: 0,
  trace: [],
  updatedAt: 't',
  ...fields,
});

describe('startedByKey', () => {
  it("finds the steps whose current generation this invalidation's key started, and none without a key", () => {
    const records = [record('w', { generationKey: 'k' }), record('d', { generationKey: 'other' }), record('e')];
    expect([...startedByKey(records, 'k')]).toEqual(['w']);
    expect(startedByKey(records, undefined).size).toBe(0);
  });
});

describe('generationBefore', () => {
  it('gives the ended generation with its status and, when it was in flight, the execution that claimed it', () => {
    const step = record('w', {
      claimedBy: 'exec-2',
      history: [{ generation: 1, status: 'running', claimedBy: 'exec-1' }],
    });
    expect(generationBefore(step)).toMatchObject({ generation: 1, status: 'running', claimedBy: 'exec-1' });
    expect(
      generationBefore(record('w', { claimedBy: 'exec-2', history: [{ generation: 1, status: 'succeeded' }] })),
    ).not.toHaveProperty('claimedBy');
  });
});

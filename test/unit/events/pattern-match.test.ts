import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUS_RULES } from '../../../shared/events/bus-rules.ts';
import { type EventPattern, matchesPattern } from '../../../shared/events/pattern-match.ts';

const stepFailed: unknown = JSON.parse(
  readFileSync(new URL('../../fixtures/events/step-failed.json', import.meta.url), 'utf8'),
);

const cases: [string, EventPattern, boolean][] = [
  ['exact value', { source: ['cairn'] }, true],
  ['exact value that differs', { source: ['other'] }, false],
  ['one of several values', { 'detail-type': ['StepSucceeded', 'StepFailed'] }, true],
  ['nested exact', { detail: { stepId: ['B'] } }, true],
  ['boolean', { detail: { final: [true] } }, true],
  ['boolean that differs', { detail: { final: [false] } }, false],
  ['number', { detail: { generation: [1] } }, true],
  ['prefix', { detail: { runId: [{ prefix: 'run' }] } }, true],
  ['prefix that differs', { detail: { runId: [{ prefix: 'job' }] } }, false],
  ['suffix', { 'detail-type': [{ suffix: 'Failed' }] }, true],
  ['equals-ignore-case', { source: [{ 'equals-ignore-case': 'CAIRN' }] }, true],
  ['wildcard', { resources: [{ wildcard: 'arn:aws:states:*:execution:cairn-step:*' }] }, true],
  ['anything-but value', { detail: { stepId: [{ 'anything-but': 'A' }] } }, true],
  ['anything-but the value itself', { detail: { stepId: [{ 'anything-but': 'B' }] } }, false],
  ['anything-but list', { detail: { stepId: [{ 'anything-but': ['A', 'B'] }] } }, false],
  ['anything-but prefix', { detail: { runId: [{ 'anything-but': { prefix: 'run' } }] } }, false],
  ['anything-but on a missing field', { detail: { missing: [{ 'anything-but': 'x' }] } }, false],
  ['exists true', { detail: { error: { code: [{ exists: true }] } } }, true],
  ['exists true on a missing field', { detail: { missing: [{ exists: true }] } }, false],
  ['exists false on a missing field', { detail: { missing: [{ exists: false }] } }, true],
  ['exists false on a present field', { detail: { runId: [{ exists: false }] } }, false],
  ['numeric range inside', { detail: { attempts: [{ numeric: ['>', 3, '<=', 4] }] } }, true],
  ['numeric range outside', { detail: { attempts: [{ numeric: ['>=', 5] }] } }, false],
  ['numeric on a string', { detail: { runId: [{ numeric: ['>', 0] }] } }, false],
  ['array in the event: any element', { detail: { tags: ['web'] } }, true],
  ['array in the event: no element', { detail: { tags: ['mobile'] } }, false],
  ['$or, one branch matches', { $or: [{ detail: { stepId: ['Z'] } }, { detail: { attempts: [4] } }] }, true],
  ['$or, no branch matches', { $or: [{ detail: { stepId: ['Z'] } }, { detail: { attempts: [5] } }] }, false],
  ['all fields must match', { source: ['cairn'], detail: { stepId: ['Z'] } }, false],
  ['nested pattern over a leaf', { source: { x: ['y'] } }, false],
];

describe('matchesPattern', () => {
  it.each(cases)('matches %s → %s', (_name, pattern, expected) => {
    expect(matchesPattern(stepFailed, pattern)).toBe(expected);
  });

  it('does not match when the event is not an object', () => {
    expect(matchesPattern('StepFailed', { source: ['cairn'] })).toBe(false);
  });
});

describe('BUS_RULES', () => {
  it('routes a final step failure to the replanner and nothing else', () => {
    const matched = BUS_RULES.filter((rule) => matchesPattern(stepFailed, rule.pattern)).map((rule) => rule.target);
    expect(matched).toEqual(['Replanner']);
  });
});

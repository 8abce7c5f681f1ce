/**
 * A fast "certainly valid" test for one step, so that the common case (a well-formed step) skips zod, whose
 * recursive JSON-value schema costs several times a JSON.parse of the same text.
 *
 * The zod schema in schema.ts stays the authority: this test may only accept steps zod accepts (a property test
 * checks that), and any step it does not accept, including one with a field it does not know, goes through zod,
 * which decides and explains. It can be stricter than zod, never looser.
 */
/** Whether a value nests deeper than `max` levels of arrays and objects (a cyclic value always does). Iterative. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: unknown[] = [value];
  const depths: number[] = [0];
  while (pending.length > 0) {
    const v = pending.pop();
    const depth = depths.pop() ?? 0;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      pending.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

import { MAX_JSON_DEPTH } from '../json.ts';
import {
  APPROVAL_TIMEOUT_POLICIES,
  EXPRESSION_PATTERN,
  FAILURE_POLICIES,
  MAX_WATCHES_PER_STEP,
  SEGMENT_PATTERN,
  STEP_ID_PATTERN,
  STEP_STATUSES,
  TARGET_PATTERN,
} from '../schema.ts';

const MAX_DEPTH = MAX_JSON_DEPTH;
const STATUSES: ReadonlySet<unknown> = new Set(STEP_STATUSES);

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/** A JSON value made of plain objects, arrays, strings, finite numbers, booleans and null (iterative). */
export function isJsonValue(value: unknown): boolean {
  const pending: unknown[] = [value];
  const depths: number[] = [0];
  while (pending.length > 0) {
    const v = pending.pop();
    const depth = depths.pop() ?? 0;
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return false;
      continue;
    }
    if (depth >= MAX_DEPTH) return false;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i += 1) {
        pending.push(v[i]);
        depths.push(depth + 1);
      }
      continue;
    }
    if (!isPlainObject(v)) return false;
    for (const key of Object.keys(v)) {
      pending.push(v[key]);
      depths.push(depth + 1);
    }
  }
  return true;
}

const nonBlank = (v: unknown, max: number): boolean => typeof v === 'string' && v.length <= max && v.trim().length > 0;
const optional = (v: unknown, test: (v: unknown) => boolean): boolean => v === undefined || test(v);
const isString = (v: unknown): boolean => typeof v === 'string';
const isExpression = (v: unknown): boolean => typeof v === 'string' && EXPRESSION_PATTERN.test(v);
const isJsonObject = (v: unknown): boolean => isPlainObject(v) && isJsonValue(v);
const inRange = (v: unknown, min: number, max: number): boolean =>
  typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
const isSafeInt = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v);

// Array.prototype.every skips the holes of a sparse array; zod does not.
const everyItem = (v: unknown, test: (item: unknown) => boolean): boolean => {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i += 1) if (!test(v[i])) return false;
  return true;
};

const onlyKeys = (v: Record<string, unknown>, allowed: ReadonlySet<string>): boolean => {
  for (const key of Object.keys(v)) if (!allowed.has(key)) return false;
  return true;
};

const CRITERIA_KEYS = new Set(['description', 'assert']);
const APPROVAL_KEYS = new Set(['question', 'timeoutSeconds', 'onTimeout']);
const TIMEOUT_POLICIES: ReadonlySet<unknown> = new Set(APPROVAL_TIMEOUT_POLICIES);
const FAILURE_POLICY_SET: ReadonlySet<unknown> = new Set(FAILURE_POLICIES);
const ERROR_KEYS = new Set(['code', 'message', 'retryable', 'details']);

// One test per field this file knows; a step with any other field is left to zod.
const FIELD_TESTS: Readonly<Record<string, (v: unknown) => boolean>> = {
  id: (v) => typeof v === 'string' && STEP_ID_PATTERN.test(v),
  title: (v) => nonBlank(v, 200),
  description: (v) => optional(v, isString),
  target: (v) => v === null || (typeof v === 'string' && TARGET_PATTERN.test(v)),
  parentId: (v) => optional(v, isString),
  dependsOn: (v) => everyItem(v, isString),
  input: (v) => optional(v, isJsonValue),
  when: (v) => optional(v, isExpression),
  inputSchema: (v) => optional(v, isJsonObject),
  outputSchema: (v) => optional(v, isJsonObject),
  successCriteria: (v) =>
    optional(
      v,
      (c) =>
        isPlainObject(c) &&
        onlyKeys(c, CRITERIA_KEYS) &&
        typeof c.description === 'string' &&
        optional(c.assert, isExpression),
    ),
  maxRetries: (v) => optional(v, (n) => isSafeInt(n) && inRange(n, 0, 10)),
  onFailure: (v) => optional(v, (p) => FAILURE_POLICY_SET.has(p)),
  confidenceThreshold: (v) => optional(v, (n) => inRange(n, 0, 1)),
  rollbackHint: (v) => optional(v, (s) => nonBlank(s, 2000)),
  segment: (v) => optional(v, (s) => typeof s === 'string' && SEGMENT_PATTERN.test(s)),
  approval: (v) =>
    optional(
      v,
      (a) =>
        isPlainObject(a) &&
        onlyKeys(a, APPROVAL_KEYS) &&
        nonBlank(a.question, 2000) &&
        isSafeInt(a.timeoutSeconds) &&
        (a.timeoutSeconds as number) > 0 &&
        optional(a.onTimeout, (p) => TIMEOUT_POLICIES.has(p)),
    ),
  watches: (v) =>
    optional(
      v,
      (w) =>
        Array.isArray(w) &&
        w.length <= MAX_WATCHES_PER_STEP &&
        everyItem(w, (s) => typeof s === 'string' && s.length >= 1 && s.length <= 512),
    ),
  estimatedDurationSeconds: (v) => optional(v, (n) => inRange(n, 0, Number.MAX_VALUE)),
  status: (v) => optional(v, (s) => STATUSES.has(s)),
  result: (v) => optional(v, isJsonValue),
  error: (v) =>
    v === undefined ||
    v === null ||
    (isPlainObject(v) &&
      onlyKeys(v, ERROR_KEYS) &&
      typeof v.code === 'string' &&
      typeof v.message === 'string' &&
      optional(v.retryable, (r) => typeof r === 'boolean') &&
      optional(v.details, isJsonValue)),
};
const REQUIRED = ['id', 'title', 'target', 'dependsOn'];

/** true only for a step the zod step schema certainly accepts unchanged. */
export function isCertainlyValidStep(step: unknown): boolean {
  if (!isPlainObject(step)) return false;
  for (const key of REQUIRED) if (!Object.hasOwn(step, key)) return false;
  for (const key of Object.keys(step)) {
    if (!Object.hasOwn(FIELD_TESTS, key)) return false;
    const test = FIELD_TESTS[key];
    if (test === undefined || !test(step[key])) return false;
  }
  return true;
}

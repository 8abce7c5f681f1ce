/**
 * A step's `metadata` is free-form (any JSON object, checked by the shape rule) but small: it travels with the plan
 * revision and every run view, so it is capped at MAX_METADATA_BYTES of JSON (E_METADATA_TOO_LARGE).
 */
import { child, type IssueSink, issue } from '../issues.ts';
import { MAX_METADATA_BYTES } from '../schema.ts';
import type { StepView } from './shape.ts';

const encoder = new TextEncoder();

export function checkMetadata(steps: readonly StepView[], issues: IssueSink): void {
  for (const step of steps) {
    const { metadata } = step.raw;
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) continue;
    let bytes: number;
    try {
      bytes = encoder.encode(JSON.stringify(metadata)).length;
    } catch {
      continue; // not JSON: the shape rule reports it
    }
    if (bytes > MAX_METADATA_BYTES)
      issues.push(
        issue(
          'E_METADATA_TOO_LARGE',
          child(step.path, 'metadata'),
          `metadata is ${bytes} bytes of JSON, over the limit of ${MAX_METADATA_BYTES}`,
        ),
      );
  }
}

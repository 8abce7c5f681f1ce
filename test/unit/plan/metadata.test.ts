import { describe, expect, it } from 'vitest';
import { MAX_METADATA_BYTES } from '../../../shared/plan/schema.ts';
import { validate } from '../../../shared/plan/validate.ts';
import { catalog, plan, step, where } from './plan-testkit.ts';

/** A metadata object whose JSON is exactly `bytes` long: {"n":"xxx…"}. */
const metadataOf = (bytes: number) => ({ n: 'x'.repeat(bytes - '{"n":""}'.length) });

describe('validate: step metadata', () => {
  it('accepts free-form metadata up to the limit', () => {
    const p = plan([step('a', [], { metadata: { owner: 'team-a', ticket: 42, tags: ['x'] } })]);
    expect(validate(p, catalog)).toMatchObject({ valid: true });
    expect(validate(plan([step('a', [], { metadata: metadataOf(MAX_METADATA_BYTES) })]), catalog)).toMatchObject({
      valid: true,
    });
  });

  it('E_METADATA_TOO_LARGE one byte over 4 KB, counted in UTF-8', () => {
    const over = plan([step('a', [], { metadata: metadataOf(MAX_METADATA_BYTES + 1) })]);
    expect(where(validate(over, catalog))).toEqual(['E_METADATA_TOO_LARGE /steps/0/metadata']);
    const wide = plan([step('a', [], { metadata: { n: 'é'.repeat(2100) } })]);
    expect(where(validate(wide, catalog))).toEqual(['E_METADATA_TOO_LARGE /steps/0/metadata']);
  });

  it('E_FIELD for metadata that is not an object', () => {
    const p = plan([step('a', [], { metadata: ['x'] as never })]);
    expect(where(validate(p, catalog))).toEqual(['E_FIELD /steps/0/metadata']);
  });
});

/**
 * Each default has one owner, shared/config/defaults.ts: the modules that used to hold a copy now hand on that one.
 */
import { describe, expect, it } from 'vitest';
import * as defaults from '../../../shared/config/defaults.ts';
import { DEFAULT_MAX_REPLANS } from '../../../shared/engine/replan.ts';
import { DEFAULT_LIMITS } from '../../../shared/plan/validate.ts';
import * as capabilityCall from '../../../shared/services/step/capability-call.ts';

describe('the defaults', () => {
  it('are the ones the domain core hands on', () => {
    expect(DEFAULT_LIMITS).toBe(defaults.DEFAULT_LIMITS);
    expect(DEFAULT_MAX_REPLANS).toBe(defaults.DEFAULT_MAX_REPLANS);
  });

  it('agree with the capability caller’s own fallbacks (used only when no configuration is passed)', () => {
    expect(capabilityCall.DEFAULT_MAX_OUTPUT_BYTES).toBe(defaults.DEFAULT_MAX_OUTPUT_BYTES);
    expect(capabilityCall.DEFAULT_IDEMPOTENCY_TTL_SECONDS).toBe(defaults.DEFAULT_IDEMPOTENCY_TTL_SECONDS);
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(defaults.DEFAULT_LIMITS)).toBe(true);
    expect(Object.isFrozen(defaults.DEFAULT_BUILTIN_PACKS)).toBe(true);
  });
});

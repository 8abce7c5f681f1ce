import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodePlan } from '../../../shared/plan/codec.ts';
import { validateText } from '../../../shared/plan/validate.ts';
import { catalog, fixturePath, readFixture } from './plan-testkit.ts';

// Sample plans of the contract checks: one valid plan per file in good/, one defect per file in bad/ named by code.
// The malformed-JSON sample ends in .json.txt so that the linter, which parses every .json file, leaves it alone.
const plansIn = (kind: string) =>
  readdirSync(fixturePath(`plans/${kind}`)).filter((f) => f.endsWith('.json') || f.endsWith('.json.txt'));

describe('fixture plans', () => {
  it.each(plansIn('good'))('good/%s is valid, generated or not', (file) => {
    const text = readFixture(`plans/good/${file}`);
    expect(validateText(text, catalog)).toMatchObject({ valid: true, errors: [] });
    expect(validateText(text, catalog, {}, { generated: true })).toEqual({
      valid: true,
      plan: JSON.parse(text),
      errors: [],
    });
    expect(decodePlan(text)).toEqual({ ok: true, plan: JSON.parse(text) });
  });

  it.each(plansIn('bad'))('bad/%s fails with exactly the code it is named after', (file) => {
    const code = file.split('--')[0];
    const result = validateText(readFixture(`plans/bad/${file}`), catalog, {}, { generated: true });
    expect(result.valid).toBe(false);
    expect(result.errors.map((e) => e.code)).toEqual([code]);
  });
});

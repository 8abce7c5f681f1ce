import { describe, expect, it } from 'vitest';
import { parsePayload, required, runTaskPayload } from '../../../shared/api/lambda-support.ts';
import { isValidationError } from '../../../shared/errors.ts';

describe('required', () => {
  it('fails loudly on a missing required variable', () => {
    expect(() => required({}, 'CAIRN_TABLE_NAME')).toThrow('CAIRN_TABLE_NAME is not set');
    expect(() => required({ CAIRN_TABLE_NAME: ' ' }, 'CAIRN_TABLE_NAME')).toThrow('CAIRN_TABLE_NAME is not set');
    expect(required({ CAIRN_TABLE_NAME: 't' }, 'CAIRN_TABLE_NAME')).toBe('t');
  });
});

describe('parsePayload', () => {
  it('returns the parsed payload or throws a ValidationError with pointers', () => {
    expect(parsePayload(runTaskPayload, { runId: 'r', extra: 1 })).toEqual({ runId: 'r' });
    let error: unknown;
    try {
      parsePayload(runTaskPayload, { runId: 5 });
    } catch (e) {
      error = e;
    }
    expect(isValidationError(error)).toBe(true);
    expect((error as { errors: { path: string }[] }).errors[0]?.path).toBe('/runId');
  });
});

import { describe, expect, it } from 'vitest';
import { BadServerTimeoutsError, serverTimeouts } from '../../../infra/local/http-server.ts';
import { DEFAULT_LOCAL_SERVER_TIMEOUTS } from '../../../shared/config/defaults.ts';

describe('serverTimeouts', () => {
  it('puts the given timeouts over the defaults', () => {
    expect(serverTimeouts({ idleMs: 1500 })).toEqual({ ...DEFAULT_LOCAL_SERVER_TIMEOUTS, idleMs: 1500 });
  });

  it.each([
    [{ requestMs: 0 }, /requestMs must be a positive whole number of ms, got 0/],
    [{ idleMs: Number.POSITIVE_INFINITY }, /idleMs must be a positive whole number/],
    [{ keepAliveMs: 1.5 }, /keepAliveMs must be a positive whole number/],
    [{ headersMs: 20_000, requestMs: 10_000 }, /headersMs must not exceed serverTimeouts.requestMs/],
  ])('refuses %o with BadServerTimeoutsError', (given, message) => {
    expect(() => serverTimeouts(given)).toThrow(BadServerTimeoutsError);
    expect(() => serverTimeouts(given)).toThrow(message);
  });
});

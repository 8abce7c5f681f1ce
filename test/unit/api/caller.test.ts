import { describe, expect, it } from 'vitest';
import { callerFromClaims, claimValues } from '../../../shared/api/caller.ts';

const env = (claims: Record<string, unknown>, scopes?: unknown) => ({
  requestContext: { authorizer: { jwt: { claims, ...(scopes === undefined ? {} : { scopes }) } } },
});

describe('claimValues', () => {
  it('reads a list claim however it travels', () => {
    expect(claimValues(['operator', 'finance'])).toEqual(['operator', 'finance']);
    // API Gateway's HTTP API hands an array claim to the function as `[a b]`.
    expect(claimValues('[operator finance]')).toEqual(['operator', 'finance']);
    expect(claimValues('openid cairn/operator')).toEqual(['openid', 'cairn/operator']);
    expect(claimValues('operator,finance')).toEqual(['operator', 'finance']);
    expect(claimValues('[]')).toEqual([]);
    expect(claimValues(undefined)).toEqual([]);
    expect(claimValues(42)).toEqual([]);
  });
});

describe('callerFromClaims', () => {
  it('takes roles from groups named as roles, and keeps every group for the approvers rules', () => {
    const caller = callerFromClaims(env({ sub: 'ana', 'cognito:groups': '[approver finance]' }));
    expect(caller).toEqual({
      subject: 'ana',
      roles: new Set(['approver']),
      groups: ['approver', 'finance'],
      tenant: 'default',
      shared: false,
    });
  });

  it('takes roles from scopes with the prefix, from the claim or the authorizer’s list', () => {
    expect(callerFromClaims(env({ sub: 'bo', scope: 'openid cairn/operator operator' }))?.roles).toEqual(
      new Set(['operator']),
    );
    expect(callerFromClaims(env({ sub: 'bo' }, ['cairn/viewer']))?.roles).toEqual(new Set(['viewer']));
  });

  it('reads the claims and prefix the deployment names, and no others', () => {
    const names = { groups: 'groups', scopes: 'scp', scopePrefix: 'https://api.example.com/' };
    const caller = callerFromClaims(
      env({ sub: 'cy', groups: ['admin'], scp: 'https://api.example.com/approver', 'cognito:groups': '[viewer]' }),
      names,
    );
    expect(caller?.roles).toEqual(new Set(['admin', 'approver']));
    expect(caller?.groups).toEqual(['admin']);
  });

  it('gives no role to a token without one, and no caller without a subject', () => {
    expect(callerFromClaims(env({ sub: 'dan', 'cognito:groups': '[staff]' }))?.roles).toEqual(new Set());
    expect(callerFromClaims(env({ 'cognito:groups': '[admin]' }))).toBeUndefined();
    expect(callerFromClaims({})).toBeUndefined();
  });
});

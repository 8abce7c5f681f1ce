import { describe, expect, it } from 'vitest';
import { createHandler, defaultDeps } from '../../../functions/role-scopes.ts';

/** A Cognito pre token generation event (version 2), as the hosted sign-in sends it. */
const event = (groups: string[] | undefined) => ({
  version: '2',
  triggerSource: 'TokenGeneration_HostedAuth',
  region: 'us-east-1',
  userPoolId: 'us-east-1_pool',
  userName: 'ana',
  callerContext: { awsSdkVersion: 'x', clientId: 'client' },
  request: {
    userAttributes: { sub: 'ana' },
    scopes: ['openid', 'email'],
    ...(groups === undefined ? {} : { groupConfiguration: { groupsToOverride: groups } }),
  },
  response: { claimsAndScopeOverrideDetails: null },
});

describe('the user pool token trigger', () => {
  it("adds a scope for each of the person's role groups to the access token, and nothing for other groups", async () => {
    const handler = createHandler({ scopePrefix: 'cairn/' });
    const answered = await handler(event(['finance', 'approver', 'viewer']));
    expect(answered.response).toEqual({
      claimsAndScopeOverrideDetails: { accessTokenGeneration: { scopesToAdd: ['cairn/viewer', 'cairn/approver'] } },
    });
    expect(answered.request).toEqual(event(['finance', 'approver', 'viewer']).request);
  });

  it('adds nothing for a person without groups, and never fails a sign-in on an odd event', async () => {
    const handler = createHandler({ scopePrefix: 'cairn/' });
    for (const odd of [event(undefined), { ...event([]), request: 'odd' }]) {
      expect((await handler(odd)).response).toEqual({
        claimsAndScopeOverrideDetails: { accessTokenGeneration: { scopesToAdd: [] } },
      });
    }
  });

  it('takes its prefix from CAIRN_ROLE_SCOPE_PREFIX', () => {
    expect(defaultDeps({})).toEqual({ scopePrefix: 'cairn/' });
    expect(defaultDeps({ CAIRN_ROLE_SCOPE_PREFIX: 'api/' })).toEqual({ scopePrefix: 'api/' });
  });
});

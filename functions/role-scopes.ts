/**
 * The built-in user pool's pre token generation trigger (Cognito, event version 2): a person's role groups
 * (`viewer`, `operator`, `approver`, `admin`) become scopes of their access token (`cairn/operator`), the scopes
 * API Gateway checks on each route (infra/constructs/api-routes.ts). The groups stay in `cognito:groups`, which the
 * API reads too. The client cannot ask for these scopes itself: only this trigger grants them, from the groups an
 * administrator put the person in.
 *
 * Never fails a sign-in for a shape it does not know: a person without groups gets no role scope.
 *
 * Environment: CAIRN_ROLE_SCOPE_PREFIX (default `cairn/`).
 */
import { z } from 'zod';
import { roleScopesOfGroups } from '../shared/api/contract/roles.ts';
import { type Env, settingsFromEnv } from '../shared/config/settings.ts';

/** The part of the event the trigger reads; everything else is handed back untouched. */
const eventSchema = z.object({
  request: z.object({
    groupConfiguration: z.object({ groupsToOverride: z.array(z.string()).optional() }).optional(),
  }),
});

export interface TokenTriggerEvent {
  readonly request?: unknown;
  readonly response?: unknown;
  readonly [key: string]: unknown;
}

export function createHandler(deps: { readonly scopePrefix: string }) {
  return async <E extends TokenTriggerEvent>(event: E): Promise<E> => {
    const parsed = eventSchema.safeParse(event);
    const groups = parsed.success ? (parsed.data.request.groupConfiguration?.groupsToOverride ?? []) : [];
    const scopesToAdd = roleScopesOfGroups(groups, deps.scopePrefix);
    return { ...event, response: { claimsAndScopeOverrideDetails: { accessTokenGeneration: { scopesToAdd } } } };
  };
}

export const defaultDeps = (env: Env = process.env) => ({
  scopePrefix: settingsFromEnv(env).roleClaims.scopePrefix,
});

let built: ReturnType<typeof createHandler> | undefined;
export const handler = async <E extends TokenTriggerEvent>(event: E): Promise<E> => {
  built ??= createHandler(defaultDeps());
  return built(event);
};

/**
 * The HTTP API's security properties in the synthesized template: a JWT authorizer on every route but the webhooks
 * and the console's static page, the issuer and audience from context (or the built-in user pool), throttling,
 * access logs, CORS for the console origin only, and webhook secrets readable by the webhook function alone.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_ROUTE_KEYS } from '../../infra/constructs/api.ts';
import { authorizedRoutes, routeKey } from '../../infra/constructs/api-routes.ts';
import { DEFAULT_CONFIG } from '../../infra/constructs/config.ts';
import { scopesFor } from '../../shared/api/contract/roles.ts';
import { needOf } from '../../shared/api/contract/route.ts';
import { ROUTES } from '../../shared/api/contract/routes/index.ts';
import {
  actionsOf,
  FULL_CONTEXT,
  logicalIdAt,
  OIDC_CONTEXT,
  resourcesOf,
  statementsOf,
  synthStack,
  TOKEN_TRIGGER_PATH,
} from './synth-stack.ts';

let plain: Template;
let full: Template;
let oidc: Template;

beforeAll(() => {
  plain = synthStack().template;
  full = synthStack(FULL_CONTEXT).template;
  oidc = synthStack(OIDC_CONTEXT).template;
});

type Route = { RouteKey: string; AuthorizationType: string; AuthorizerId?: { Ref: string } };
const routesOf = (template: Template): Route[] =>
  Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map((r) => r.Properties as Route);
const only = <T>(items: T[]): T => {
  expect(items).toHaveLength(1);
  return items[0] as T;
};

describe('routes', () => {
  it('need the JWT authorizer everywhere except the webhooks and the console page', () => {
    for (const template of [plain, full, oidc]) {
      const authorizerId = only(Object.keys(template.findResources('AWS::ApiGatewayV2::Authorizer')));
      const routes = routesOf(template);
      const authorized = authorizedRoutes(DEFAULT_CONFIG.roles).map(routeKey);
      expect(routes.map((r) => r.RouteKey).sort()).toEqual([...authorized, ...PUBLIC_ROUTE_KEYS].sort());
      for (const route of routes) {
        if ((PUBLIC_ROUTE_KEYS as readonly string[]).includes(route.RouteKey)) {
          expect(route.AuthorizationType, route.RouteKey).toBe('NONE');
        } else {
          expect(route, route.RouteKey).toMatchObject({
            AuthorizationType: 'JWT',
            AuthorizerId: { Ref: authorizerId },
          });
        }
      }
    }
  });

  it('let GET /openapi.json through without a JWT, as the function does', () => {
    const route = routesOf(plain).find((r) => r.RouteKey === 'GET /openapi.json');
    expect(route?.AuthorizationType).toBe('NONE');
  });

  it('leave CORS preflight to API Gateway: no catch-all, no ANY, no OPTIONS route that an authorizer would refuse', () => {
    for (const template of [plain, full]) {
      for (const route of routesOf(template)) expect(route.RouteKey).toMatch(/^(GET|POST) \//);
    }
  });

  it('leave only POST open on the webhook path and only GET on the console path and the OpenAPI document', () => {
    const open = routesOf(full).filter((r) => r.AuthorizationType === 'NONE');
    for (const route of open) {
      expect(route.RouteKey).toMatch(
        /^(POST \/webhooks\/\{source\}|GET \/console(\/\{proxy\+\})?|GET \/openapi\.json)$/,
      );
    }
  });
});

type ScopedRoute = Route & { AuthorizationScopes?: string[] };
const scopesByKey = (template: Template): Record<string, string[] | undefined> =>
  Object.fromEntries(routesOf(template).map((r) => [r.RouteKey, (r as ScopedRoute).AuthorizationScopes]));

describe('route scopes', () => {
  const anyRole = ['cairn/viewer', 'cairn/operator', 'cairn/approver', 'cairn/admin'];
  const operator = ['cairn/operator', 'cairn/admin'];
  const approver = ['cairn/approver', 'cairn/admin'];

  it('give each route the scopes of the role it needs, so API Gateway refuses a token without it', () => {
    for (const template of [plain, full, oidc]) {
      const scopes = scopesByKey(template);
      expect(scopes['POST /runs']).toEqual(operator);
      expect(scopes['POST /runs/{runId}/cancel']).toEqual(operator);
      expect(scopes['POST /runs/{runId}/replan']).toEqual(operator);
      expect(scopes['POST /runs/{runId}/steps/{stepId}/invalidate']).toEqual(operator);
      expect(scopes['POST /runs/{runId}/steps/{stepId}/compensation']).toEqual(operator);
      expect(scopes['POST /approvals/{id}']).toEqual(approver);
      expect(scopes['POST /approvals/{id}/check']).toEqual(approver);
      expect(scopes['GET /runs']).toEqual(anyRole);
      expect(scopes['GET /runs/{runId}']).toEqual(anyRole);
      expect(scopes['GET /approvals']).toEqual(anyRole);
      // Any valid JWT: who am I, and the health check as before roles.
      expect(scopes['GET /me']).toBeUndefined();
      expect(scopes['GET /health']).toBeUndefined();
      // What no operation serves is for admins only: anybody else never learns which paths exist.
      expect(scopes['GET /{proxy+}']).toEqual(['cairn/admin']);
      expect(scopes['POST /{proxy+}']).toEqual(['cairn/admin']);
    }
  });

  it('come from the route table for every route that needs a role', () => {
    const scopes = scopesByKey(full);
    for (const route of ROUTES) {
      const need = needOf(route);
      if (need === undefined || route.optional) continue;
      const key = `${route.method.toUpperCase()} ${route.path}`;
      expect(scopes[key], key).toEqual(need === 'caller' ? undefined : scopesFor(need));
    }
  });

  it('take the prefix from context, and are left off with routeScopes false (the function alone checks)', () => {
    const prefixed = scopesByKey(synthStack({ roleScopePrefix: 'https://api.example.com/' }).template);
    expect(prefixed['POST /runs']).toEqual(['https://api.example.com/operator', 'https://api.example.com/admin']);
    const off = synthStack({ ...OIDC_CONTEXT, routeScopes: 'false' }).template;
    for (const route of routesOf(off))
      expect((route as ScopedRoute).AuthorizationScopes, route.RouteKey).toBeUndefined();
    expect(() => synthStack({ routeScopes: 'maybe' })).toThrow(/routeScopes/);
  });

  it('tell the API function which claims hold the roles and the tenant', () => {
    const plain = synthStack(OIDC_CONTEXT).template;
    const plainApi = logicalIdAt(plain, 'AWS::Lambda::Function', '/Functions/Api/Resource');
    expect(plain.findResources('AWS::Lambda::Function')[plainApi]?.Properties).toMatchObject({
      Environment: { Variables: { CAIRN_TENANT_CLAIM: 'custom:tenant' } },
    });
    const custom = synthStack({
      ...OIDC_CONTEXT,
      roleGroupsClaim: 'groups',
      roleScopesClaim: 'scp',
      tenantClaim: 'org_id',
    }).template;
    const api = logicalIdAt(custom, 'AWS::Lambda::Function', '/Functions/Api/Resource');
    expect(custom.findResources('AWS::Lambda::Function')[api]?.Properties).toMatchObject({
      Environment: {
        Variables: {
          CAIRN_ROLE_GROUPS_CLAIM: 'groups',
          CAIRN_ROLE_SCOPES_CLAIM: 'scp',
          CAIRN_ROLE_SCOPE_PREFIX: 'cairn/',
          CAIRN_TENANT_CLAIM: 'org_id',
        },
      },
    });
  });
});

describe('built-in user pool roles', () => {
  it('are four groups named as the roles', () => {
    const groups = Object.values(full.findResources('AWS::Cognito::UserPoolGroup')).map(
      (g) => (g.Properties as { GroupName: string }).GroupName,
    );
    expect(groups.sort()).toEqual(['admin', 'approver', 'operator', 'viewer']);
    oidc.resourceCountIs('AWS::Cognito::UserPoolGroup', 0);
  });

  it('reach the access token as scopes through a version 2 token trigger that may only write its logs', () => {
    const trigger = logicalIdAt(full, 'AWS::Lambda::Function', TOKEN_TRIGGER_PATH);
    full.hasResourceProperties('AWS::Cognito::UserPool', {
      LambdaConfig: {
        PreTokenGenerationConfig: { LambdaArn: { 'Fn::GetAtt': [trigger, 'Arn'] }, LambdaVersion: 'V2_0' },
      },
    });
    const properties = full.findResources('AWS::Lambda::Function')[trigger]?.Properties as {
      Environment: { Variables: Record<string, unknown> };
    };
    expect(properties.Environment.Variables).toEqual({ CAIRN_ROLE_SCOPE_PREFIX: 'cairn/' });
    const role = logicalIdAt(full, 'AWS::IAM::Role', '/Api/Users/TokenTrigger/Role/Resource');
    const granted = statementsOf(full).filter(
      ({ owner, statement }) => owner.startsWith(role.slice(0, -8)) || JSON.stringify(statement).includes(`"${role}"`),
    );
    for (const { statement } of granted) for (const action of actionsOf(statement)) expect(action).toMatch(/^logs:/);
  });
});

describe('authorizer', () => {
  it('checks the issuer and audience given in context', () => {
    oidc.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: { Issuer: 'https://login.example.com/', Audience: ['cairn-api', 'cairn-console'] },
    });
    oidc.resourceCountIs('AWS::Cognito::UserPool', 0);
  });

  it('uses the built-in user pool and its console client when no issuer is given', () => {
    const pool = logicalIdAt(full, 'AWS::Cognito::UserPool', '/Users/Pool/Resource');
    const client = logicalIdAt(full, 'AWS::Cognito::UserPoolClient', '/Users/Pool/Console/Resource');
    full.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      JwtConfiguration: { Issuer: { 'Fn::GetAtt': [pool, 'ProviderURL'] }, Audience: [{ Ref: client }] },
    });
    full.hasResourceProperties('AWS::Cognito::UserPool', {
      MfaConfiguration: 'ON',
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      Policies: { PasswordPolicy: { MinimumLength: 12, RequireSymbols: true, RequireUppercase: true } },
    });
    full.hasResourceProperties('AWS::Cognito::UserPoolClient', {
      GenerateSecret: false,
      AllowedOAuthFlows: ['code'],
    });
  });

  it('rejects an issuer without an audience', () => {
    expect(() => synthStack({ jwtIssuer: 'https://login.example.com/' })).toThrow(/jwtIssuer and jwtAudience/);
  });
});

describe('stage', () => {
  it('throttles with the defaults or the context limits', () => {
    plain.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
    synthStack({ apiRateLimit: '7', apiBurstLimit: 9 }).template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 7, ThrottlingBurstLimit: 9 },
    });
  });

  it('writes access logs with the request id and the caller to a log group with a retention', () => {
    const stage = only(Object.values(full.findResources('AWS::ApiGatewayV2::Stage')));
    const settings = (stage.Properties as { AccessLogSettings: { DestinationArn: unknown; Format: string } })
      .AccessLogSettings;
    const group = logicalIdAt(full, 'AWS::Logs::LogGroup', '/Api/AccessLogs/Resource');
    expect(settings.DestinationArn).toEqual({ 'Fn::GetAtt': [group, 'Arn'] });
    expect(JSON.parse(settings.Format)).toMatchObject({
      requestId: '$context.requestId',
      sub: '$context.authorizer.claims.sub',
    });
  });
});

describe('CORS', () => {
  it('is off without a console origin', () => {
    const api = only(Object.values(plain.findResources('AWS::ApiGatewayV2::Api')));
    expect(api.Properties).not.toHaveProperty('CorsConfiguration');
  });

  it('allows the console origin alone, without credentials', () => {
    const api = only(Object.values(full.findResources('AWS::ApiGatewayV2::Api')));
    const cors = (api.Properties as { CorsConfiguration: Record<string, unknown> }).CorsConfiguration;
    expect(cors.AllowOrigins).toEqual([FULL_CONTEXT.consoleOrigin]);
    expect(cors.AllowCredentials ?? false).toBe(false);
  });

  it('rejects a console origin that is not an origin', () => {
    expect(() => synthStack({ consoleOrigin: 'https://console.example.com/app' })).toThrow(/consoleOrigin/);
  });
});

describe('webhook secrets', () => {
  it('are one generated secret per source, named for the webhook adapter', () => {
    for (const source of ['github', 'ci']) {
      full.hasResourceProperties('AWS::SecretsManager::Secret', {
        Name: `cairn/test/webhooks/${source}`,
        GenerateSecretString: { GenerateStringKey: 'secret', SecretStringTemplate: '{}' },
      });
    }
    plain.resourceCountIs('AWS::SecretsManager::Secret', 0);
  });

  it('are readable by the webhook function alone, which is told where they are', () => {
    const secrets = Object.keys(full.findResources('AWS::SecretsManager::Secret'));
    const apiPolicy = logicalIdAt(full, 'AWS::IAM::Policy', '/Functions/ApiRole/DefaultPolicy/Resource');
    const readers = statementsOf(full).filter(({ statement }) =>
      resourcesOf(statement).some((r) => secrets.some((id) => JSON.stringify(r).includes(`"${id}"`))),
    );
    expect(readers.length).toBeGreaterThan(0);
    for (const { owner, statement } of readers) {
      expect(owner).toBe(apiPolicy);
      expect(actionsOf(statement)).toContain('secretsmanager:GetSecretValue');
    }
    const withPrefix = Object.values(full.findResources('AWS::Lambda::Function')).filter((fn) =>
      JSON.stringify(fn.Properties).includes('CAIRN_WEBHOOK_SECRET_PREFIX'),
    );
    expect(withPrefix).toHaveLength(1);
    expect(JSON.stringify(withPrefix[0])).toContain('"CAIRN_WEBHOOK_SECRET_PREFIX":"cairn/test/webhooks"');
  });

  it('rejects a source name that cannot be a path segment and a secret name', () => {
    expect(() => synthStack({ webhookSources: 'git hub' })).toThrow(/webhookSources/);
  });
});

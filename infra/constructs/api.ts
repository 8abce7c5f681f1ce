/**
 * The HTTP API in front of the API Lambda. Every route needs a JWT (an outside OIDC issuer, or the built-in Cognito
 * user pool), with the scopes of the role the route needs (api-routes.ts, from the contract's route table), except
 * two kinds that cannot carry one: the signed webhooks (`POST /webhooks/{source}`, HMAC-verified
 * by the function with a per-source secret from Secrets Manager) and the console's static page (`GET /console/…`,
 * which holds no data; every data request it makes carries a token). The stage is throttled and access-logged;
 * CORS is off unless a console origin is configured, and then allows that origin alone.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  type HttpRoute,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { authorizedRoutes } from './api-routes.ts';
import type { CairnConfig } from './config.ts';
import { CairnUserPool } from './user-pool.ts';

/** Routes API Gateway lets through without a JWT (each one says why it needs none). */
export const PUBLIC_ROUTE_KEYS = [
  'POST /webhooks/{source}',
  'GET /console',
  'GET /console/{proxy+}',
  'GET /openapi.json',
] as const;

/** Secrets Manager names: the webhook adapter reads `<prefix>/<source>` (shared/adapters/aws/webhook-secrets.ts). */
export const webhookSecretPrefix = (stage: string): string => `cairn/${stage}/webhooks`;

export type ApiConfig = Pick<
  CairnConfig,
  | 'stage'
  | 'jwt'
  | 'roles'
  | 'consoleOidc'
  | 'consoleOrigin'
  | 'webhookSources'
  | 'webhookTenants'
  | 'apiRateLimit'
  | 'apiBurstLimit'
  | 'logRetentionDays'
  | 'retainData'
>;

export interface CairnApiProps {
  readonly config: ApiConfig;
  /** Serves every authenticated route and the console page. */
  readonly handler: LambdaFunction;
  /** Serves `POST /webhooks/{source}` and alone may read the webhook secrets. */
  readonly webhookHandler: LambdaFunction;
}

export class CairnApi extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogs: LogGroup;
  readonly consoleUrl: string;
  /** Present when no outside issuer is configured. */
  readonly userPool?: CairnUserPool;
  readonly webhookSecrets: Readonly<Record<string, Secret>>;
  readonly authorizedRoutes: HttpRoute[];
  /** The routes without a JWT authorizer, by why they have none. */
  readonly publicRoutes: {
    readonly webhooks: HttpRoute[];
    readonly console: HttpRoute[];
    readonly contract: HttpRoute[];
  };

  constructor(scope: Construct, id: string, props: CairnApiProps) {
    super(scope, id);
    const { config } = props;
    this.httpApi = new HttpApi(this, 'HttpApi', {
      apiName: `cairn-${config.stage}`,
      description: `cairn ${config.stage}: runs, plans, approvals, webhooks, console`,
      createDefaultStage: false,
      ...(config.consoleOrigin === undefined
        ? {}
        : {
            corsPreflight: {
              allowOrigins: [config.consoleOrigin],
              allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST, CorsHttpMethod.OPTIONS],
              allowHeaders: ['authorization', 'content-type', 'idempotency-key'],
              maxAge: Duration.hours(1),
            },
          }),
    });
    this.consoleUrl = `${this.httpApi.apiEndpoint}/console/`;

    let jwt = config.jwt;
    let oidc = config.consoleOidc;
    if (jwt === undefined) {
      const callbackUrls = [
        this.consoleUrl,
        ...(config.consoleOrigin === undefined ? [] : [`${config.consoleOrigin}/console/`]),
      ];
      this.userPool = new CairnUserPool(this, 'Users', {
        stage: config.stage,
        callbackUrls,
        retain: config.retainData,
        scopePrefix: config.roles.scopePrefix,
        logRetentionDays: config.logRetentionDays,
      });
      jwt = this.userPool.jwt;
      oidc = this.userPool.consoleOidc;
    }
    const authorizer = new HttpJwtAuthorizer('Jwt', jwt.issuer, { jwtAudience: [...jwt.audience] });
    const api = new HttpLambdaIntegration('Api', props.handler);
    // GET and POST only (all the API has), not `$default` or ANY: those would also catch CORS preflight OPTIONS and
    // send it to the authorizer; with no OPTIONS route, API Gateway answers preflight itself.
    this.authorizedRoutes = authorizedRoutes(config.roles).flatMap((route) =>
      this.httpApi.addRoutes({
        path: route.path,
        methods: [route.method === 'GET' ? HttpMethod.GET : HttpMethod.POST],
        integration: api,
        authorizer,
        ...(route.scopes === undefined ? {} : { authorizationScopes: [...route.scopes] }),
      }),
    );
    // The function checks the route's role again, from the claims the deployment names.
    props.handler.addEnvironment('CAIRN_ROLE_GROUPS_CLAIM', config.roles.groupsClaim);
    props.handler.addEnvironment('CAIRN_ROLE_SCOPES_CLAIM', config.roles.scopesClaim);
    props.handler.addEnvironment('CAIRN_ROLE_SCOPE_PREFIX', config.roles.scopePrefix);
    // And which tenant the caller is in: every run, approval and listing is that tenant's.
    props.handler.addEnvironment('CAIRN_TENANT_CLAIM', config.roles.tenantClaim);
    const none = new HttpNoneAuthorizer();
    const get = [HttpMethod.GET];
    this.publicRoutes = {
      // The OpenAPI document describes the routes and holds no data: tools read it before they have a token.
      contract: this.httpApi.addRoutes({ path: '/openapi.json', methods: get, integration: api, authorizer: none }),
      console: [
        ...this.httpApi.addRoutes({ path: '/console', methods: get, integration: api, authorizer: none }),
        ...this.httpApi.addRoutes({ path: '/console/{proxy+}', methods: get, integration: api, authorizer: none }),
      ],
      webhooks: this.httpApi.addRoutes({
        path: '/webhooks/{source}',
        methods: [HttpMethod.POST],
        integration: new HttpLambdaIntegration('Webhooks', props.webhookHandler),
        authorizer: none,
      }),
    };

    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: config.logRetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: config.apiRateLimit, burstLimit: config.apiBurstLimit },
      accessLogSettings: { destination: new LogGroupLogDestination(this.accessLogs), format: accessLogFormat() },
    });

    // The console signs in with the authorization-code flow and sends the access token (its default).
    if (oidc !== undefined) {
      props.handler.addEnvironment('CAIRN_CONSOLE_OIDC_AUTHORIZE_URL', oidc.authorizeUrl);
      props.handler.addEnvironment('CAIRN_CONSOLE_OIDC_TOKEN_URL', oidc.tokenUrl);
      props.handler.addEnvironment('CAIRN_CONSOLE_OIDC_CLIENT_ID', oidc.clientId);
    }
    this.webhookSecrets = this.createWebhookSecrets(config, props.webhookHandler);
  }

  /** One generated secret per source (`{"secret": "…"}`), readable by the webhook function alone. */
  private createWebhookSecrets(config: ApiConfig, handler: LambdaFunction): Record<string, Secret> {
    const secrets: Record<string, Secret> = {};
    const prefix = webhookSecretPrefix(config.stage);
    for (const source of config.webhookSources) {
      const secret = new Secret(this, `WebhookSecret-${source}`, {
        secretName: `${prefix}/${source}`,
        description: `HMAC signing secret of the ${source} webhook (share it with the sender)`,
        generateSecretString: {
          secretStringTemplate: '{}',
          generateStringKey: 'secret',
          passwordLength: 48,
          excludePunctuation: true,
        },
        removalPolicy: RemovalPolicy.DESTROY,
      });
      secret.grantRead(handler);
      secrets[source] = secret;
    }
    if (config.webhookSources.length > 0) handler.addEnvironment('CAIRN_WEBHOOK_SECRET_PREFIX', prefix);
    // Whose resources each source reports (shared/api/webhooks.ts): a change invalidates that tenant's runs only.
    if (Object.keys(config.webhookTenants).length > 0)
      handler.addEnvironment('CAIRN_WEBHOOK_TENANTS', JSON.stringify(config.webhookTenants));
    return secrets;
  }

  get url(): string {
    return this.httpApi.apiEndpoint;
  }
}

/** One JSON line per request: who (JWT subject), what route, how it went, and why an authorizer said no. */
function accessLogFormat(): AccessLogFormat {
  return AccessLogFormat.custom(
    JSON.stringify({
      requestId: '$context.requestId',
      time: '$context.requestTime',
      ip: '$context.identity.sourceIp',
      routeKey: '$context.routeKey',
      status: '$context.status',
      latencyMs: '$context.responseLatency',
      responseBytes: '$context.responseLength',
      sub: '$context.authorizer.claims.sub',
      authorizerError: '$context.authorizer.error',
      integrationError: '$context.integrationErrorMessage',
    }),
  );
}

/**
 * An API Gateway HTTP API (payload 2.0) event as the JWT authorizer leaves it, for the deployed API handler's tests:
 * every claim a string (an array as `[a b]`); no claims, no authorizer context.
 */
import type { LambdaEvent } from 'hono/aws-lambda';

export interface GatewayEventOptions {
  readonly body?: unknown;
  readonly claims?: Record<string, string>;
  readonly headers?: Record<string, string>;
  /** The route API Gateway matched (default `<method> <path>`). */
  readonly routeKey?: string;
}

export function gatewayEvent(method: string, path: string, options: GatewayEventOptions = {}): LambdaEvent {
  return {
    version: '2.0',
    routeKey: options.routeKey ?? `${method} ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.body === undefined ? null : JSON.stringify(options.body),
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '10.0.0.1', userAgent: 'test' },
      requestId: 'req',
      routeKey: options.routeKey ?? `${method} ${path}`,
      stage: '$default',
      time: '01/Jan/2030:00:00:00 +0000',
      timeEpoch: 1_893_456_000_000,
      authentication: null,
      authorizer: options.claims === undefined ? {} : { jwt: { claims: options.claims, scopes: null } },
    },
  } as unknown as LambdaEvent;
}

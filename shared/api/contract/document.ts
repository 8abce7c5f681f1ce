/**
 * The OpenAPI 3.1 document of the API, built from the route definitions (routes/) and their zod schemas: the
 * contract clients are generated from (docs/openapi.json, `npm run openapi`) and `GET /openapi.json` serves.
 * Every route gets, besides its own answers, the shared refusals that the app gives any route of its kind.
 */
import type { z } from 'zod';
import pkg from '../../../package.json' with { type: 'json' };
import { ID_PARAMS } from '../path-ids.ts';
import { type JsonSchema, SchemaComponents } from './json-schema.ts';
import { accessOf, needOf, type ResponseDef, type RouteDef, retryOf } from './route.ts';
import { ROUTES } from './routes/index.ts';
import { ErrorBody } from './schemas/common.ts';

const TAGS = [
  { name: 'runs', description: 'Start, list, read and cancel runs; their plans and audit logs.' },
  { name: 'steps', description: "A run's steps: one step whole, invalidation, compensation, replans, revisions." },
  { name: 'plans', description: 'Planning without running: plans, planning jobs, validation.' },
  { name: 'approvals', description: 'Decisions that wait for a person.' },
  { name: 'service', description: 'Health, this document, signed webhooks, the conformance ledger.' },
];

const errorExample = (code: string, message: string) => ({ error: { code, message } });

/** The refusals any route may give, by the conditions that make a route give them. */
const SHARED_RESPONSES: Record<string, ResponseDef & { readonly example: unknown }> = {
  BadRequest: {
    description: 'E_BAD_REQUEST: the body, query or a header is not what the route takes (E_BAD_CURSOR for a cursor).',
    example: errorExample('E_BAD_REQUEST', 'invalid request body'),
  },
  Unauthorized: {
    description: 'E_UNAUTHORIZED: no valid bearer token (or, for a webhook, no valid signature).',
    example: errorExample('E_UNAUTHORIZED', 'missing or invalid bearer token'),
  },
  Forbidden: {
    description: "E_FORBIDDEN: the caller's roles do not include the one the operation needs (its `security`).",
    example: errorExample('E_FORBIDDEN', 'this needs the operator role (or admin); ana has viewer'),
  },
  NotFound: {
    description: 'E_NOT_FOUND: nothing has this id.',
    example: errorExample('E_NOT_FOUND', 'run 0b0c7e0e-9f3c-4d2a-8a43-52c1e5f5d2a1 not found'),
  },
  TooLarge: {
    description: 'E_TOO_LARGE: the body is over 1 MB (a webhook: 256 KB).',
    example: errorExample('E_TOO_LARGE', 'the request body exceeds 1048576 bytes'),
  },
  Internal: {
    description: 'E_INTERNAL: an unexpected failure; nothing about it is told.',
    example: errorExample('E_INTERNAL', 'internal error'),
  },
  Unavailable: {
    description:
      'E_UNAVAILABLE or E_OVERLOADED: busy, or not configured on this deployment. With Retry-After, send the same ' +
      'request again after it.',
    headers: { 'Retry-After': { description: 'Seconds to wait before sending the request again.' } },
    example: errorExample('E_UNAVAILABLE', 'a service this API depends on is busy or did not answer in time'),
  },
};

function sharedResponsesOf(route: RouteDef): Record<string, string> {
  const reads = route.params ?? route.query ?? route.headers ?? route.body;
  const need = needOf(route);
  return {
    ...(reads === undefined ? {} : { 400: 'BadRequest' }),
    ...(accessOf(route) === 'public' ? {} : { 401: 'Unauthorized' }),
    ...(need === undefined || need === 'caller' ? {} : { 403: 'Forbidden' }),
    ...(route.params === undefined || route.access === 'signature' ? {} : { 404: 'NotFound' }),
    ...(route.body === undefined ? {} : { 413: 'TooLarge' }),
    500: 'Internal',
    503: 'Unavailable',
  };
}

function parameters(route: RouteDef, schemas: SchemaComponents): unknown[] {
  const found: unknown[] = [];
  const place = (where: 'path' | 'query' | 'header', object: z.ZodObject | undefined) => {
    if (object === undefined) return;
    const json = schemas.toJsonSchema(object, 'output');
    const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json.required ?? []) as string[]);
    for (const [name, { description, ...schema }] of Object.entries(properties)) {
      const noun = where === 'path' ? ID_PARAMS[name] : undefined;
      const about = description ?? (noun === undefined ? undefined : `The ${noun}'s id.`);
      found.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(about === undefined ? {} : { description: about }),
        schema,
      });
    }
  };
  place('path', route.params);
  place('query', route.query);
  place('header', route.headers);
  return found;
}

const jsonContent = (schema: JsonSchema | undefined, example: unknown) => ({
  'application/json': { ...(schema === undefined ? {} : { schema }), ...(example === undefined ? {} : { example }) },
});

function headersOf(response: ResponseDef) {
  if (response.headers === undefined) return {};
  return {
    headers: Object.fromEntries(
      Object.entries(response.headers).map(([name, { description }]) => [
        name,
        { description, schema: { type: 'string' } },
      ]),
    ),
  };
}

function operation(route: RouteDef, schemas: SchemaComponents): JsonSchema {
  const responses: Record<string, unknown> = {};
  for (const [status, name] of Object.entries(sharedResponsesOf(route)))
    responses[status] = { $ref: `#/components/responses/${name}` };
  for (const [status, response] of Object.entries(route.responses)) {
    responses[status] = {
      description: response.description,
      ...headersOf(response),
      ...(response.schema === undefined
        ? {}
        : { content: jsonContent(schemas.toJsonSchema(response.schema), response.example) }),
    };
  }
  const params = parameters(route, schemas);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    tags: [route.tag],
    ...(params.length === 0 ? {} : { parameters: params }),
    ...(route.body === undefined
      ? {}
      : {
          requestBody: {
            required: route.body.required,
            content: jsonContent(schemas.toJsonSchema(route.body.schema), route.body.example),
          },
        }),
    responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b))),
    ...securityOf(route),
    'x-cairn-retry': retryOf(route),
  };
}

/**
 * Who may call the operation: none for a public or signed route; a bearer token with the role it needs
 * (contract/roles.ts; admin holds every role), or any bearer token (the document's default).
 */
function securityOf(route: RouteDef): { security?: unknown[] } {
  const need = needOf(route);
  if (need === undefined) return { security: [] };
  return need === 'caller' ? {} : { security: [{ bearer: [need] }] };
}

/** The document for these routes (all of them by default). */
export function buildOpenApiDocument(routes: readonly RouteDef[] = ROUTES): JsonSchema {
  const schemas = new SchemaComponents();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    const item = paths[route.path] ?? {};
    if (item[route.method] !== undefined) throw new Error(`openapi: ${route.method} ${route.path} is defined twice`);
    item[route.method] = operation(route, schemas);
  }
  const errorSchema = schemas.toJsonSchema(ErrorBody);
  const responses = Object.fromEntries(
    Object.entries(SHARED_RESPONSES).map(([name, response]) => [
      name,
      {
        description: response.description,
        ...headersOf(response),
        content: jsonContent(errorSchema, response.example),
      },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'cairn API',
      version: pkg.version,
      description:
        'Turns an objective into a validated plan of steps and runs it durably. Errors are `{ error: { code, ' +
        'message, details? } }` with stable codes. Lists page with `nextCursor`. `x-cairn-retry` says whether an ' +
        'operation may be sent again after a network error, 429 or 503: `safe`, `keyed` (with the same ' +
        'Idempotency-Key) or `never`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    tags: TAGS,
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas.schemas).sort(([a], [b]) => a.localeCompare(b))),
      responses,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Embedded (`npm start`): the static token it prints (an admin), or a token of the tokens file ' +
            '(`--tokens`). Deployed: a JWT checked by API Gateway, its roles from its groups or scopes. An ' +
            "operation's `security` names the role it needs: viewer, operator, approver or admin (admin holds all).",
        },
      },
    },
  };
}

let built: JsonSchema | undefined;

/** The document of every route, built once (it takes a few tens of milliseconds). */
export function openApiDocument(): JsonSchema {
  built ??= buildOpenApiDocument();
  return built;
}

/** The service's own routes: health, this document, who is calling, signed webhooks, the conformance ledger. */
import { z } from 'zod';
import { LEGACY_HEADERS, STANDARD_HEADERS } from '../../../webhooks/signature.ts';
import { named } from '../registry.ts';
import { ROLES } from '../roles.ts';
import { defineRoute } from '../route.ts';
import { webhookBody } from '../schemas/requests.ts';

export const health = defineRoute({
  operationId: 'health',
  method: 'get',
  path: '/health',
  tag: 'service',
  summary: 'Liveness',
  access: 'public',
  responses: { 200: { description: 'Up.', schema: z.object({ ok: z.literal(true) }) } },
});

export const getOpenApi = defineRoute({
  operationId: 'getOpenApi',
  method: 'get',
  path: '/openapi.json',
  tag: 'service',
  summary: 'This document (OpenAPI 3.1)',
  access: 'public',
  responses: { 200: { description: 'The OpenAPI document.', schema: z.record(z.string(), z.unknown()) } },
});

const Caller = named(
  'Caller',
  z.object({
    subject: z.string(),
    roles: z.array(z.enum(ROLES)),
    groups: z.array(z.string()),
    tenant: z
      .string()
      .describe('Whose runs and approvals the caller sees: `default` when its token or JWT names no tenant.'),
  }),
  { description: "Who the token stands for: its subject, its roles and groups (an approval's approvers name groups)." },
);

export const getCaller = defineRoute({
  operationId: 'getCaller',
  method: 'get',
  path: '/me',
  tag: 'service',
  summary: 'Who the token stands for, and its roles',
  description: 'Any valid token, whatever its roles: the console shows who is signed in and what they may do.',
  responses: { 200: { description: 'The caller.', schema: Caller } },
});

const WebhookAccepted = named(
  'WebhookAccepted',
  z.object({
    accepted: z.literal(true),
    resourceKeys: z.array(z.string()).optional(),
    duplicate: z.literal(true).optional(),
    deliveryId: z.string(),
  }),
);

export const receiveWebhook = defineRoute({
  operationId: 'receiveWebhook',
  method: 'post',
  path: '/webhooks/{source}',
  tag: 'service',
  summary: 'An outside system says resources changed',
  description:
    "No bearer token: signed per the Standard Webhooks specification with the source's secret. " +
    `\`${STANDARD_HEADERS.id}\` is the message id (the same on every retry), \`${STANDARD_HEADERS.timestamp}\` Unix ` +
    `seconds within 5 minutes of the server clock, \`${STANDARD_HEADERS.signature}\` one or more space-separated ` +
    '`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">` (a `whsec_<base64>` secret: the key is the decoded ' +
    'bytes; another secret: its UTF-8 bytes). A message id seen before within the tolerance is answered 200 as a ' +
    `duplicate. The earlier \`${LEGACY_HEADERS.timestamp}\` + \`${LEGACY_HEADERS.signature}: sha256=<hex HMAC of ` +
    '"<timestamp>.<raw body>">` stay accepted; a signature of the body alone is refused. Every refusal before the ' +
    'signature is proven (an unknown source, a stale timestamp, a bad or missing signature) is the same 401.',
  access: 'signature',
  retry: 'safe',
  params: z.object({ source: z.string() }),
  headers: z.object({
    [STANDARD_HEADERS.id]: z.string().optional(),
    [STANDARD_HEADERS.timestamp]: z.string().regex(/^\d+$/).optional(),
    [STANDARD_HEADERS.signature]: z.string().optional(),
    [LEGACY_HEADERS.signature]: z.string().optional(),
    [LEGACY_HEADERS.timestamp]: z.string().regex(/^\d+$/).optional(),
  }),
  body: { schema: webhookBody, required: true, example: { resourceKeys: ['s3://bucket/report.csv'] } },
  responses: {
    202: { description: 'One ResourceChanged event published per distinct key.', schema: WebhookAccepted },
    200: { description: 'A delivery seen before: nothing published.', schema: WebhookAccepted },
  },
});

export const conformanceLedger = defineRoute({
  operationId: 'conformanceLedger',
  method: 'get',
  path: '/conformance/ledger',
  tag: 'service',
  summary: "The conformance pack's ledger of side effects (only on a stack run with the pack)",
  optional: true,
  responses: { 200: { description: 'The ledger.', schema: z.object({ entries: z.array(z.unknown()) }) } },
});

export const SERVICE_ROUTES = [health, getOpenApi, getCaller, receiveWebhook, conformanceLedger] as const;

import { readFile } from 'node:fs/promises';
import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_TYPES_FILE,
  DOCUMENT_FILE,
  renderClientTypes,
  renderDocument,
} from '../../../scripts/openapi-outputs.ts';
import { createApp } from '../../../shared/api/app.ts';
import { isPublicRoute } from '../../../shared/api/auth.ts';
import { openApiDocument } from '../../../shared/api/contract/document.ts';
import { ROUTE_ROLES } from '../../../shared/api/contract/roles.ts';
import { accessOf, honoPath, needOf } from '../../../shared/api/contract/route.ts';
import { ROUTES } from '../../../shared/api/contract/routes/index.ts';
import { contractProblems } from '../../support/openapi-check.ts';
import { harness } from './harness.ts';

const committed = (file: string) => readFile(new URL(`../../../${file}`, import.meta.url), 'utf8');

/** A path of the route with each parameter filled in. */
const samplePath = (path: string): string => path.replace(/\{[^}]+\}/g, 'x1');

describe('GET /openapi.json', () => {
  it('answers the document without a token, and it validates as OpenAPI 3.1', async () => {
    const h = await harness();
    const answer = await createApp(h.deps).request('/openapi.json');
    const document = (await answer.json()) as Record<string, unknown>;

    expect(answer.status).toBe(200);
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document) as Parameters<typeof validate>[0]);
    expect(result.valid ? [] : result.errors).toEqual([]);
    // The parser checks the document's structure and references; each schema is checked against its dialect here.
    const meta = new Ajv2020({ strict: true });
    const schemas = (document.components as { schemas: Record<string, object> }).schemas;
    const invalid = Object.entries(schemas).filter(([, schema]) => meta.validateSchema(schema) !== true);
    expect(invalid.map(([name]) => name)).toEqual([]);
  });

  it('is the committed docs/openapi.json (npm run openapi rewrites it)', async () => {
    const h = await harness();
    const served = await (await createApp(h.deps).request('/openapi.json')).json();

    expect(served).toEqual(JSON.parse(await committed(DOCUMENT_FILE)));
    expect(renderDocument()).toBe(await committed(DOCUMENT_FILE));
  });

  it('is what the committed client types were generated from', async () => {
    expect(await renderClientTypes()).toBe(await committed(CLIENT_TYPES_FILE));
  });
});

describe('the route definitions', () => {
  it('are exactly the routes the app serves', async () => {
    const h = await harness({ ledger: { entries: () => [] } });
    const served = createApp(h.deps)
      .routes.filter((r) => r.method !== 'ALL' && !r.path.startsWith('/console'))
      .map((r) => `${r.method} ${r.path}`);
    const defined = ROUTES.map((r) => `${r.method.toUpperCase()} ${honoPath(r.path)}`);

    expect([...new Set(served)].sort()).toEqual([...defined].sort());
  });

  it('say who may call each route as the authentication does', () => {
    const disagree = ROUTES.filter(
      (r) => isPublicRoute(r.method.toUpperCase(), samplePath(r.path)) !== (accessOf(r) !== 'bearer'),
    ).map((r) => r.operationId);

    expect(disagree).toEqual([]);
  });

  it('document the shared refusals with the coded error body', async () => {
    const h = await harness();
    const refused = await h.request('GET', '/runs/nope');

    expect(refused.status).toBe(404);
    expect(contractProblems('getRun', 404, await refused.json())).toEqual([]);
    expect(contractProblems('getRun', 404, { message: 'no code' })).not.toEqual([]);
  });

  it('give every operation an id, a summary and a retry policy', () => {
    const paths = openApiDocument().paths as Record<string, Record<string, Record<string, unknown>>>;
    const operations = Object.values(paths).flatMap((item) => Object.values(item));

    expect(operations).toHaveLength(ROUTES.length);
    for (const operation of operations) {
      expect(operation).toMatchObject({ operationId: expect.any(String), summary: expect.any(String) });
      expect(['safe', 'keyed', 'never']).toContain(operation['x-cairn-retry']);
    }
  });

  it('name the role each operation needs in its security, as the route table says', () => {
    const paths = openApiDocument().paths as Record<string, Record<string, Record<string, unknown>>>;
    const operation = (method: string, path: string) => paths[path]?.[method] ?? {};
    expect(operation('post', '/runs').security).toEqual([{ bearer: ['operator'] }]);
    expect(operation('post', '/approvals/{id}').security).toEqual([{ bearer: ['approver'] }]);
    expect(operation('get', '/runs').security).toEqual([{ bearer: ['viewer'] }]);
    // Any token (the document's default), and no token at all.
    expect(operation('get', '/me')).not.toHaveProperty('security');
    expect(operation('get', '/health').security).toEqual([]);
    for (const route of ROUTES) {
      const op = operation(route.method, route.path);
      const need = needOf(route);
      const security = op.security as { bearer?: string[] }[] | undefined;
      if (need === undefined) expect(security, route.operationId).toEqual([]);
      else if (need === 'caller') expect(security, route.operationId).toBeUndefined();
      else {
        expect(security, route.operationId).toEqual([
          { bearer: [ROUTE_ROLES[route.operationId as keyof typeof ROUTE_ROLES]] },
        ]);
        expect(op.responses, route.operationId).toHaveProperty('403');
      }
    }
  });
});

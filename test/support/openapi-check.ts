/**
 * Checks an API answer against what the OpenAPI document (docs/openapi.json, as the contract builds it) says the
 * operation answers with that status: the document's own JSON Schema, through Ajv (draft 2020-12).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../shared/api/contract/document.ts';

const BASE = 'https://cairn.invalid/openapi.json';
const pointer = (...parts: string[]): string =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

interface Operation {
  readonly operationId: string;
  readonly responses: Record<string, { readonly $ref?: string; readonly content?: unknown }>;
}

let ajv: Ajv2020 | undefined;

function validator(): Ajv2020 {
  if (ajv) return ajv;
  // Not strict: the document around the schemas (paths, info) is not a schema, only reached through pointers.
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ ...openApiDocument(), $id: BASE });
  return ajv;
}

/** Where the schema of `operationId`'s answer with `status` is, as a JSON Pointer into the document. */
function schemaPointer(operationId: string, status: number): string {
  const paths = openApiDocument().paths as Record<string, Record<string, Operation>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (operation.operationId !== operationId) continue;
      const response = operation.responses[String(status)];
      if (response === undefined) throw new Error(`${operationId} documents no ${status} answer`);
      if (response.$ref !== undefined) return `${response.$ref.slice(1)}/content/application~1json/schema`;
      return `/${pointer('paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema')}`;
    }
  }
  throw new Error(`no operation ${operationId}`);
}

/** The problems of `body` as `operationId`'s answer with `status` (empty: it is what the document says). */
export function contractProblems(operationId: string, status: number, body: unknown): string[] {
  const validate = validator().getSchema(`${BASE}#${schemaPointer(operationId, status)}`);
  if (!validate) throw new Error(`no schema for ${operationId} ${status}`);
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${operationId} ${status}: ${e.instancePath || '/'} ${e.message ?? ''}`);
}

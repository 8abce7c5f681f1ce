/**
 * dynalite's operations called as functions. Its HTTP listener, for every request, parses the body from JSON, draws a
 * random request id from the crypto module, serializes the answer to JSON and computes its CRC32, all of which the
 * embedded client then undoes (the fast path parsed the answer back): about a seventh of a zero-work step's CPU. The
 * listener's own work after those is three calls, made here in the same order with the same arguments: `checkTypes`
 * and `checkValidations` against the operation's validation module, then the operation's action on the store. So an
 * answer is what the listener would have sent, as data.
 *
 * The store is the one the listener serves (captured when dynalite creates it), so both paths see one table, and
 * closing dynalite's server still closes it. dynalite's listener checks the headers (target, content type,
 * signature) before those calls; the calls made here are the embedded client's own item operations, whose requests
 * would carry what those checks ask for (the client's content type and placeholder signature).
 */
import { createRequire } from 'node:module';
import { storeDynaliteTablesAsText } from '../../shared/adapters/local/dynalite-text-storage.ts';
import type { TextResponse } from './dynamo-fast-path.ts';

/** dynalite's store (db/index.js `create`): opaque here, handed back to its actions and validations. */
type Store = object;
interface Validation {
  readonly types: object;
  readonly custom?: unknown;
}
interface Validations {
  checkTypes(data: object, types: object): Record<string, unknown>;
  checkValidations(data: object, types: object, custom: unknown, store: Store): void;
}
type Action = (
  store: Store,
  data: object,
  callback: (error: (Error & { statusCode?: number; body?: object }) | null, data?: object) => void,
) => void;
/** An error dynalite answers with a status (a validation or the action's own refusal). */
type HttpError = Error & { statusCode: number; body: object };

// Before anything here loads dynalite's db module.
storeDynaliteTablesAsText();
const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
const validations = fromDynalite('./validations') as Validations;
const crc32 = fromDynalite('buffer-crc32') as { unsigned(text: string): number };

/** What dynalite answered: its status and body, and the request id its headers would carry. */
export interface DirectAnswer {
  readonly statusCode: number;
  readonly data: Record<string, unknown>;
  readonly requestId: string;
}

const operations = new Map<string, { validation: Validation; action: Action }>();
function operation(name: string): { validation: Validation; action: Action } {
  let found = operations.get(name);
  if (found === undefined) {
    const module = name.charAt(0).toLowerCase() + name.slice(1);
    found = {
      validation: fromDynalite(`./validations/${module}`) as Validation,
      action: fromDynalite(`./actions/${module}`) as Action,
    };
    operations.set(name, found);
  }
  return found;
}

const isHttpError = (error: unknown): error is HttpError =>
  error instanceof Error && typeof (error as { statusCode?: unknown }).statusCode === 'number';

let requests = 0;
/** A request id unique in the process (dynalite draws 52 random characters; nothing here reads them). */
const nextRequestId = (): string => `LOCAL${(requests++).toString(36).toUpperCase().padStart(47, '0')}`;

/**
 * Calls `operation` (`GetItem`, `UpdateItem`, ...) on `store` with `data`, the request as dynalite would have parsed
 * it (a fresh copy: dynalite's type check deletes members it does not know). An error without a status is a bug in
 * dynalite and rejects (its listener would have thrown it).
 */
export function callDynalite(store: Store, name: string, data: object): Promise<DirectAnswer> {
  const requestId = nextRequestId();
  return new Promise((resolve, reject) => {
    const { validation, action } = operation(name);
    let checked: Record<string, unknown>;
    try {
      checked = validations.checkTypes(data, validation.types);
      validations.checkValidations(checked, validation.types, validation.custom, store);
    } catch (error) {
      if (isHttpError(error)) resolve({ statusCode: error.statusCode, data: error.body as never, requestId });
      else reject(error);
      return;
    }
    action(store, checked, (error, answer) => {
      if (error) {
        if (isHttpError(error)) resolve({ statusCode: error.statusCode, data: error.body as never, requestId });
        else reject(error);
        return;
      }
      resolve({ statusCode: 200, data: (answer ?? {}) as Record<string, unknown>, requestId });
    });
  });
}

/** The answer as dynalite's listener sends it (`sendData`): the body as JSON text, with its headers. */
export function answerText(answer: DirectAnswer): TextResponse {
  const text = JSON.stringify(answer.data);
  return {
    statusCode: answer.statusCode,
    headers: {
      'x-amzn-requestid': answer.requestId,
      'x-amz-crc32': String(crc32.unsigned(text)),
      'content-type': 'application/x-amz-json-1.0',
      'content-length': String(Buffer.byteLength(text, 'utf8')),
    },
    text,
  };
}

/**
 * Runs `create` (dynalite's start) and returns what it made with the store dynalite created on the way: the store
 * its listener serves. dynalite's db module is called through its export, which is swapped for the call only.
 */
export function capturingStore<T>(create: () => T): { made: T; store: Store } {
  const db = fromDynalite('./db') as { create: (options: object) => Store };
  const original = db.create;
  let store: Store | undefined;
  db.create = (options) => {
    store = original(options);
    return store;
  };
  try {
    const made = create();
    if (store === undefined) throw new Error('dynalite created no store');
    return { made, store };
  } finally {
    db.create = original;
  }
}

/**
 * Condition and update expressions built from named parts, the way Powertools' idempotency layer writes them:
 * every attribute name goes through ExpressionAttributeNames (so reserved words such as `status` never bite), every
 * value through ExpressionAttributeValues, and placeholders are readable (`#status`, `:generation`) so a failed
 * condition can be read off a log line.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

export type Condition = string & { readonly __condition: unique symbol };

export interface ExpressionParts {
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, AttributeValue>;
}

const SAFE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Collects placeholders for one request; conditions and updates of that request share it. */
export class ExpressionScope {
  private readonly names = new Map<string, string>();
  private readonly values = new Map<string, AttributeValue>();

  /** `#<attribute>` (or `#n<i>` for names that are not plain identifiers). */
  name(attribute: string): string {
    const known = this.names.get(attribute);
    if (known !== undefined) return known;
    const placeholder = SAFE_NAME.test(attribute) ? `#${attribute}` : `#n${this.names.size}`;
    this.names.set(attribute, placeholder);
    return placeholder;
  }

  /** `:<hint>`; the same hint with the same value reuses its placeholder, a different value gets a suffix. */
  value(hint: string, value: AttributeValue): string {
    let placeholder = `:${hint}`;
    for (let i = 1; this.values.has(placeholder); i++) {
      if (JSON.stringify(this.values.get(placeholder)) === JSON.stringify(value)) return placeholder;
      placeholder = `:${hint}${i}`;
    }
    this.values.set(placeholder, value);
    return placeholder;
  }

  // Plain loops: every store request builds its parts, and Object.fromEntries over a spread Map cost several times
  // as much (about 1 % of a zero-work step's CPU on the embedded stack).
  parts(): ExpressionParts {
    const ExpressionAttributeNames: Record<string, string> = {};
    for (const [attribute, placeholder] of this.names) ExpressionAttributeNames[placeholder] = attribute;
    if (this.values.size === 0) return { ExpressionAttributeNames };
    const ExpressionAttributeValues: Record<string, AttributeValue> = {};
    for (const [placeholder, value] of this.values) ExpressionAttributeValues[placeholder] = value;
    return { ExpressionAttributeNames, ExpressionAttributeValues };
  }

  // conditions

  exists(attribute: string): Condition {
    return `attribute_exists(${this.name(attribute)})` as Condition;
  }

  notExists(attribute: string): Condition {
    return `attribute_not_exists(${this.name(attribute)})` as Condition;
  }

  equals(attribute: string, value: AttributeValue, hint = attribute): Condition {
    return `${this.name(attribute)} = ${this.value(hint, value)}` as Condition;
  }

  lessThan(attribute: string, value: AttributeValue, hint = attribute): Condition {
    return `${this.name(attribute)} < ${this.value(hint, value)}` as Condition;
  }

  greaterThan(attribute: string, value: AttributeValue, hint = attribute): Condition {
    return `${this.name(attribute)} > ${this.value(hint, value)}` as Condition;
  }

  /** `#a IN (:v0, :v1, ...)`; DynamoDB accepts up to 100 operands, so an empty list is a caller bug. */
  oneOf(attribute: string, values: readonly AttributeValue[], hint = attribute): Condition {
    if (values.length === 0 || values.length > 100) {
      throw new RangeError(`IN needs 1..100 operands for ${attribute}, got ${values.length}`);
    }
    const placeholders = values.map((v, i) => this.value(`${hint}${i}`, v));
    return `${this.name(attribute)} IN (${placeholders.join(', ')})` as Condition;
  }

  contains(attribute: string, value: AttributeValue, hint = attribute): Condition {
    return `contains(${this.name(attribute)}, ${this.value(hint, value)})` as Condition;
  }

  // Parentheses only where precedence needs them (NOT binds tighter than AND, AND tighter than OR): besides being
  // easier to read, a flat condition is parsed several times faster by dynalite's expression parser, which the
  // embedded stack runs on every call.

  not(condition: Condition): Condition {
    return `NOT ${needsParens(condition, ['AND', 'OR']) ? `(${condition})` : condition}` as Condition;
  }

  and(...conditions: Condition[]): Condition {
    return conditions.map((c) => (needsParens(c, ['OR']) ? `(${c})` : c)).join(' AND ') as Condition;
  }

  or(...conditions: Condition[]): Condition {
    return conditions.join(' OR ') as Condition;
  }
}

/**
 * Whether a condition built here joins operands with one of `operators` outside any parentheses. Operands are
 * built from placeholders (`#name`, `:value`), so the words can only come from `and` / `or` / `not` themselves.
 */
function needsParens(condition: string, operators: readonly ('AND' | 'OR')[]): boolean {
  let depth = 0;
  for (let i = 0; i < condition.length; i++) {
    const char = condition[i];
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (depth === 0 && char === ' ') {
      for (const operator of operators) if (condition.startsWith(` ${operator} `, i)) return true;
    }
  }
  return false;
}

/** Accumulates the clauses of one UpdateExpression (SET, REMOVE, ADD) against a shared scope. */
export class UpdateBuilder {
  private readonly sets: string[] = [];
  private readonly removes: string[] = [];
  private readonly adds: string[] = [];
  private readonly deletes: string[] = [];

  constructor(private readonly scope: ExpressionScope) {}

  set(attribute: string, value: AttributeValue, hint = attribute): this {
    this.sets.push(`${this.scope.name(attribute)} = ${this.scope.value(hint, value)}`);
    return this;
  }

  /** `#a = list_append(if_not_exists(#a, :empty), :items)`: appends without reading the list first. */
  appendToList(attribute: string, items: AttributeValue & { L: AttributeValue[] }, hint = attribute): this {
    const name = this.scope.name(attribute);
    const empty = this.scope.value('emptyList', { L: [] });
    this.sets.push(`${name} = list_append(if_not_exists(${name}, ${empty}), ${this.scope.value(hint, items)})`);
    return this;
  }

  remove(attribute: string): this {
    this.removes.push(this.scope.name(attribute));
    return this;
  }

  /** ADD on a number adds; ADD on a set unions (a set value must not be empty). */
  add(attribute: string, value: AttributeValue, hint = attribute): this {
    this.adds.push(`${this.scope.name(attribute)} ${this.scope.value(hint, value)}`);
    return this;
  }

  /** DELETE on a set takes the members out (a value must not be empty; an absent member is no error). */
  delete(attribute: string, value: AttributeValue, hint = attribute): this {
    this.deletes.push(`${this.scope.name(attribute)} ${this.scope.value(hint, value)}`);
    return this;
  }

  get isEmpty(): boolean {
    return this.sets.length + this.removes.length + this.adds.length + this.deletes.length === 0;
  }

  expression(): string {
    const clauses: string[] = [];
    if (this.sets.length > 0) clauses.push(`SET ${this.sets.join(', ')}`);
    if (this.removes.length > 0) clauses.push(`REMOVE ${this.removes.join(', ')}`);
    if (this.adds.length > 0) clauses.push(`ADD ${this.adds.join(', ')}`);
    if (this.deletes.length > 0) clauses.push(`DELETE ${this.deletes.join(', ')}`);
    return clauses.join(' ');
  }
}

import { describe, expect, it } from 'vitest';
import { ExpressionScope } from '../../../../shared/adapters/aws/dynamo-expressions.ts';

describe('ExpressionScope conditions', () => {
  it('joins simple conditions without parentheses (AND binds tighter than OR, NOT tighter than AND)', () => {
    const scope = new ExpressionScope();
    const condition = scope.and(
      scope.equals('generation', { N: '1' }),
      scope.oneOf('status', [{ S: 'pending' }, { S: 'ready' }], 'from'),
      scope.not(scope.contains('released', { S: 'a' }, 'id')),
    );
    expect(condition).toBe(
      '#generation = :generation AND #status IN (:from0, :from1) AND NOT contains(#released, :id)',
    );
  });

  it('keeps the parentheses precedence needs: an OR inside an AND, a compound condition under NOT', () => {
    const scope = new ExpressionScope();
    const either = scope.or(scope.notExists('PK'), scope.lessThan('expiresAt', { N: '5' }, 'now'));
    expect(either).toBe('attribute_not_exists(#PK) OR #expiresAt < :now');
    const both = scope.and(scope.exists('SK'), either);
    expect(both).toBe('attribute_exists(#SK) AND (attribute_not_exists(#PK) OR #expiresAt < :now)');
    expect(scope.not(both)).toBe(`NOT (${both})`);
    expect(scope.or(both, scope.exists('GSI1PK'))).toBe(`${both} OR attribute_exists(#GSI1PK)`);
    // An OR already inside parentheses is no reason for more.
    expect(scope.and(scope.oneOf('kind', [{ S: 'x' }]), scope.exists('PK'))).toBe(
      '#kind IN (:kind0) AND attribute_exists(#PK)',
    );
  });
});

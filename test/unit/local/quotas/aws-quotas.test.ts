import { describe, expect, it } from 'vitest';
import { FUNCTION_TIMEOUT_SECONDS } from '../../../../infra/constructs/functions.ts';
import {
  AWS_DEFAULT_QUOTAS,
  BadQuotasError,
  quotasFromEnv,
  resolveQuotas,
  sfnBucketFor,
} from '../../../../infra/local/quotas/aws-quotas.ts';
import { quotaOptionsOf } from '../../../../infra/local/quotas/quota-flags.ts';

describe('resolveQuotas', () => {
  it("gives AWS's default numbers when nothing is lowered", () => {
    expect(resolveQuotas()).toEqual({
      lambdaConcurrency: 1000,
      sfnStartBucket: 1300,
      sfnStartRefillPerSecond: 300,
      partitionReadUnitsPerSecond: 3000,
      partitionWriteUnitsPerSecond: 1000,
      apiTimeoutMs: 29_000,
    });
  });

  it("ends an API request at the API Lambda's own timeout", () => {
    expect(AWS_DEFAULT_QUOTAS.apiTimeoutMs).toBe(FUNCTION_TIMEOUT_SECONDS.Api * 1000);
  });

  it('sets the StartExecution bucket in the proportion of the default (1,300 for 300 a second)', () => {
    expect(resolveQuotas({ sfnStartRate: 50 })).toMatchObject({ sfnStartRefillPerSecond: 50, sfnStartBucket: 217 });
    expect(sfnBucketFor(300)).toBe(1300);
    expect(sfnBucketFor(150)).toBe(650);
    expect(sfnBucketFor(1)).toBe(4);
  });

  it('lowers the Lambda concurrency', () => {
    expect(resolveQuotas({ lambdaConcurrency: 8 }).lambdaConcurrency).toBe(8);
  });

  it('refuses a quota that is not a whole number of at least one', () => {
    expect(() => resolveQuotas({ lambdaConcurrency: 0 })).toThrow(BadQuotasError);
    expect(() => resolveQuotas({ sfnStartRate: 2.5 })).toThrow(BadQuotasError);
    expect(() => resolveQuotas({ overrides: { partitionWriteUnitsPerSecond: -1 } })).toThrow(BadQuotasError);
  });
});

describe('quotasFromEnv', () => {
  it('is off unless CAIRN_AWS_QUOTAS or a lowered quota says otherwise', () => {
    expect(quotasFromEnv({})).toBeUndefined();
    expect(quotasFromEnv({ CAIRN_AWS_QUOTAS: '0' })).toBeUndefined();
    expect(quotasFromEnv({ CAIRN_AWS_QUOTAS: '1' })).toEqual({});
    expect(quotasFromEnv({ CAIRN_SFN_START_RATE: '50' })).toEqual({ sfnStartRate: 50 });
  });

  it('refuses what it cannot read', () => {
    expect(() => quotasFromEnv({ CAIRN_AWS_QUOTAS: 'yes please' })).toThrow(BadQuotasError);
    expect(() => quotasFromEnv({ CAIRN_LAMBDA_CONCURRENCY: 'many' })).toThrow(BadQuotasError);
  });
});

describe('quotaOptionsOf', () => {
  it('turns the quotas on with any of the three flags, the flags over the environment', () => {
    expect(quotaOptionsOf({}, {})).toBe(false);
    expect(quotaOptionsOf({ 'aws-quotas': true }, {})).toEqual({});
    expect(quotaOptionsOf({ 'lambda-concurrency': '8' }, { CAIRN_LAMBDA_CONCURRENCY: '2' })).toEqual({
      lambdaConcurrency: 8,
    });
    expect(quotaOptionsOf({ 'sfn-start-rate': '50' }, { CAIRN_AWS_QUOTAS: '1' })).toEqual({ sfnStartRate: 50 });
  });

  it('refuses a flag that is not a whole number of at least one', () => {
    expect(() => quotaOptionsOf({ 'lambda-concurrency': 'x' }, {})).toThrow(BadQuotasError);
    expect(() => quotaOptionsOf({ 'sfn-start-rate': '0' }, {})).toThrow(BadQuotasError);
  });
});

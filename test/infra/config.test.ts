/**
 * The deployment configuration read from CDK context: defaults that synthesize with no context at all, the
 * documented keys parsed from command-line strings, and loud errors for values that cannot be right.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { configFromContext, DEFAULT_CONFIG } from '../../infra/constructs/config.ts';
import {
  DEFAULT_LIMITS,
  DEFAULT_MAX_REPLANS,
  DEFAULT_RETENTION_DAYS,
  DEFAULT_RUN_DEADLINE_SECONDS,
} from '../../shared/config/defaults.ts';
import { cairnFunctions, synthStack } from './synth-stack.ts';

const fromContext = (context: Record<string, unknown>) => configFromContext(new App({ context }).node);

describe('configFromContext', () => {
  it('gives the defaults when no context is set', () => {
    expect(fromContext({})).toEqual(DEFAULT_CONFIG);
    expect(DEFAULT_CONFIG).toMatchObject({ stage: 'dev', retainData: true, logRetentionDays: 30 });
  });

  it('deploys with the Lambdas’ own defaults for the run’s numbers (shared/config/defaults.ts)', () => {
    expect(DEFAULT_CONFIG).toMatchObject({
      runDeadlineSeconds: DEFAULT_RUN_DEADLINE_SECONDS,
      maxSteps: DEFAULT_LIMITS.maxSteps,
      maxDepth: DEFAULT_LIMITS.maxDepth,
      maxReplans: DEFAULT_MAX_REPLANS,
      retentionDays: DEFAULT_RETENTION_DAYS,
    });
  });

  it('parses the documented keys from command-line strings', () => {
    expect(
      fromContext({
        stage: 'prod',
        jwtIssuer: 'https://login.example.com/',
        jwtAudience: 'api, console',
        webhookSources: 'github,ci,github',
        retainData: 'false',
        logRetentionDays: '365',
        retentionDays: '30',
        apiRateLimit: '20',
        plannerConcurrency: 'none',
        executorConcurrency: '10',
        consoleOrigin: 'http://localhost:5173',
        oidcAuthorizeUrl: 'https://login.example.com/authorize',
        oidcTokenUrl: 'https://login.example.com/token',
        oidcClientId: 'console',
        approvalTimeoutSeconds: '3600',
        replanWatchSeconds: '600',
      }),
    ).toMatchObject({
      approvalTimeoutSeconds: 3600,
      replanWatchSeconds: 600,
      stage: 'prod',
      jwt: { issuer: 'https://login.example.com/', audience: ['api', 'console'] },
      webhookSources: ['github', 'ci'],
      retainData: false,
      logRetentionDays: 365,
      retentionDays: 30,
      apiRateLimit: 20,
      executorConcurrency: 10,
      consoleOrigin: 'http://localhost:5173',
      consoleOidc: { clientId: 'console' },
    });
    expect(fromContext({ plannerConcurrency: 'none' })).not.toHaveProperty('plannerConcurrency');
    expect(fromContext({})).not.toHaveProperty('approvalTimeoutSeconds');
    expect(fromContext({})).not.toHaveProperty('replanWatchSeconds');
  });

  it('takes lists as JSON arrays too (cdk.json)', () => {
    expect(fromContext({ webhookSources: ['a', 'b'] }).webhookSources).toEqual(['a', 'b']);
  });

  it.each([
    [{ stage: 'Prod' }, /stage/],
    [{ retainData: 'yes' }, /retainData/],
    [{ logRetentionDays: '10' }, /logRetentionDays/],
    [{ executorConcurrency: '0' }, /executorConcurrency/],
    [{ approvalTimeoutSeconds: '0' }, /approvalTimeoutSeconds/],
    [{ replanWatchSeconds: '0' }, /replanWatchSeconds/],
    [{ jwtAudience: 'api' }, /jwtIssuer and jwtAudience/],
    [{ jwtIssuer: 'http://login.example.com', jwtAudience: 'api' }, /jwtIssuer/],
    [{ alarmTopicArn: 'my-topic' }, /alarmTopicArn/],
    [{ bindings: '[1]' }, /bindings/],
  ])('rejects %j', (context, message) => {
    expect(() => fromContext(context)).toThrow(message);
  });

  it('leaves the console sign-in to the user pool unless all three OIDC endpoints are given', () => {
    expect(fromContext({ oidcClientId: 'console' })).not.toHaveProperty('consoleOidc');
  });
});

describe('catalogFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-catalog-'));
  const write = (name: string, doc: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(doc, null, 2));
    return path;
  };
  const capability = {
    target: 'tool:ci.build',
    description: 'Builds a commit.',
    sideEffect: 'idempotent',
    inputSchema: { type: 'object', properties: { sha: { type: 'string' } }, required: ['sha'] },
    outputSchema: { type: 'object' },
  };

  it('is checked and resolved into the configuration, then named by CAIRN_CATALOG_FILE in every function', () => {
    const file = write('small.json', { capabilities: [capability] });
    expect(fromContext({ catalogFile: file }).catalogFile).toBe(file);
    const { template } = synthStack({ catalogFile: file });
    const functions = cairnFunctions(template);
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) {
      const variables = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.CAIRN_CATALOG_FILE).toBe('/var/task/catalog.json');
      expect(variables).not.toHaveProperty('CAIRN_CATALOG');
    }
  });

  it('refuses a catalog the Lambdas would refuse', () => {
    expect(() => fromContext({ catalogFile: write('bad.json', { capabilities: [{ target: 'x' }] }) })).toThrow(
      /invalid catalog/,
    );
    expect(() => fromContext({ catalogFile: join(dir, 'missing.json') })).toThrow(/cannot read/);
  });

  it('ships a catalog too large for a Lambda environment as a file', () => {
    const demo = fileURLToPath(new URL('../../shared/catalog/demo.json', import.meta.url));
    const { template } = synthStack({ catalogFile: demo });
    const functions = cairnFunctions(template);
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) {
      const variables = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.CAIRN_CATALOG_FILE).toBe('/var/task/catalog.json');
      expect(JSON.stringify(variables).length).toBeLessThan(4096);
    }
  });
});

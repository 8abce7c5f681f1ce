import { defineConfig } from 'vitest/config';

/**
 * Files that need a module graph of their own: those that replace a module with `vi.mock` (a mock lives in the
 * graph), and one that checks the order modules are first loaded in. A lint test (test/lint/test-projects.test.ts)
 * keeps this list and the mocking files in step.
 */
export const MOCKING_FILES = [
  'test/integration/coordinator-start-stamp.test.ts',
  'test/integration/dynamo-fast-path.test.ts',
  'test/integration/plan-validations.test.ts',
  'test/unit/functions/validator.test.ts',
  'test/unit/sim/broken-projection.test.ts',
  'test/unit/sim/broken-rule.test.ts',
  'test/unit/webhooks/signature.test.ts',
];

// Unit, CDK, lint and integration tests keep no state between files (each stack a test starts is its own and is
// closed with it), but each imported the SDK, aws-cdk-lib and the engine afresh. Sharing one module graph per worker
// took the unit tests from 139 s to 45 s (measured back to back). The browser and chaos tests keep a fresh graph per
// file.
export const SHARED_GRAPH = [
  'test/unit/**/*.test.ts',
  'test/infra/**/*.test.ts',
  'test/lint/**/*.test.ts',
  'test/integration/**/*.test.ts',
];
export const ISOLATED = ['test/e2e/**/*.test.ts', 'test/chaos/**/*.test.ts'];

export default defineConfig({
  test: {
    environment: 'node',
    // Most test files wait (on the embedded stack's timers, state machines and I/O) more than they compute: with one
    // worker per core the two cores ran at about 105 % together and the suite took 595 s; four workers keep them near
    // 190 % and take about 335 s.
    maxWorkers: 4,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      {
        extends: true,
        test: { name: 'shared-graph', include: SHARED_GRAPH, exclude: MOCKING_FILES, isolate: false },
      },
      {
        extends: true,
        test: { name: 'isolated', include: [...ISOLATED, ...MOCKING_FILES], isolate: true },
      },
    ],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Most test files wait (on the embedded stack's timers, state machines and I/O) more than they compute: with one
    // worker per core the two cores ran at about 105 % together and the suite took 595 s; four workers keep them near
    // 190 % and take about 335 s.
    maxWorkers: 4,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});

/**
 * Release: "release version 2.4.0 of billing". Build once; tests and the security scan run in parallel with the
 * changelog draft; the release manager approves; the deploy (mutating) goes out and a smoke check confirms it.
 */
import { clip, expr, firstMatch, trimName } from '../text.ts';
import { compound, type Method, primitive, ROOT_TASK, type TaskNode } from '../types.ts';

const VERSION = String.raw`v?(?<version>\d+(?:\.\d+){1,2}(?:[-+][0-9A-Za-z.-]+)?)`;
const PATTERNS = [
  new RegExp(
    String.raw`\b(?:release|ship|deploy|roll\s*out)\s+(?:version\s+)?${VERSION}\s+(?:of\s+)?(?:the\s+)?(?<service>[A-Za-z0-9][A-Za-z0-9_.-]*)`,
    'i',
  ),
  new RegExp(
    String.raw`\b(?:release|ship|deploy|roll\s*out)\s+(?:the\s+)?(?<service>[A-Za-z][A-Za-z0-9_.-]*)\s+(?:version\s+)?${VERSION}\b`,
    'i',
  ),
];

const NOT_SERVICES = new Set(['to', 'into', 'in', 'on', 'version', 'release']);

const value = (v: unknown): string => (typeof v === 'string' ? v : '');

const release: Method = {
  name: 'release',
  task: ROOT_TASK,
  bind: ({ objective }) => {
    const match = firstMatch(PATTERNS, objective);
    const service = trimName(match?.service ?? '');
    const version = (match?.version ?? '').replace(/[.+-]+$/, '');
    if (!service || !version || NOT_SERVICES.has(service.toLowerCase())) return undefined;
    return { service, version };
  },
  why: ({ params }) => `the objective asks to release ${value(params.service)} version ${value(params.version)}`,
  expand: ({ params }) => {
    const service = value(params.service);
    const version = value(params.version);
    return [
      primitive({
        key: 'build',
        title: `Build ${service} ${version}`,
        target: 'tool:ci.build',
        input: { service, version, ref: `v${version}` },
        watches: [`git:${service}/v${version}`],
        estimatedDurationSeconds: 300,
      }),
      compound({
        key: 'checks',
        task: 'verify-build',
        title: `Verify the ${service} ${version} build`,
        description: 'Test suites and the security scan, in parallel.',
        after: ['build'],
        params,
      }),
      primitive({
        key: 'changelog',
        title: `Draft the ${version} changelog`,
        target: 'agent:release.changelog',
        after: ['build'],
        input: (r) => ({ service, version, commit: expr(`${r.output('build')}.commit`) }),
        successCriteria: {
          description: 'Release notes with at least one highlight',
          assert: expr('$count($output.highlights) >= 1'),
        },
        confidenceThreshold: 0.6,
        estimatedDurationSeconds: 60,
      }),
      primitive({
        key: 'approve',
        title: `Approve ${service} ${version} for production`,
        target: 'human:release.approve',
        after: ['checks', 'changelog'],
        input: (r) => ({
          service,
          version,
          changelog: expr(`${r.output('changelog')}.markdown`),
          checks: expr(r.outputs('checks')),
        }),
        approval: {
          question: clip(
            `Deploy ${service} ${version} to production? Test, scan and changelog results are attached.`,
            2000,
          ),
          timeoutSeconds: 14_400,
        },
        estimatedDurationSeconds: 900,
      }),
      primitive({
        key: 'deploy',
        title: `Deploy ${service} ${version} to production`,
        target: 'tool:deploy.release',
        after: ['approve'],
        when: (r) => expr(`${r.output('approve')}.approved = true`),
        input: (r) => ({
          service,
          version,
          artifactId: expr(`${r.output('build')}.artifactId`),
          environment: 'production',
        }),
        rollbackHint: `Redeploy the previous version of ${service} (previousVersion in this step's output) with tool:deploy.rollback.`,
        maxRetries: 1,
        estimatedDurationSeconds: 600,
      }),
      primitive({
        key: 'smoke',
        title: `Smoke-check ${service} ${version} in production`,
        target: 'tool:http.smoke',
        after: ['deploy'],
        input: { service, environment: 'production', expectVersion: version },
        successCriteria: { description: 'Every smoke check passes', assert: expr('$output.passed = true') },
        maxRetries: 2,
        estimatedDurationSeconds: 60,
      }),
    ];
  },
};

const suite = (key: 'unit' | 'integration', service: string): TaskNode =>
  primitive({
    key: `${key}-tests`,
    title: `Run the ${key} tests of ${service}`,
    target: 'tool:ci.test',
    input: (r) => ({ artifactId: expr(`${r.output('build')}.artifactId`), suite: key }),
    successCriteria: { description: 'No failing test', assert: expr('$output.failed = 0') },
    estimatedDurationSeconds: key === 'unit' ? 120 : 480,
  });

const scan = (): TaskNode =>
  primitive({
    key: 'security-scan',
    title: 'Scan the build for vulnerabilities',
    target: 'tool:security.scan',
    input: (r) => ({ artifactId: expr(`${r.output('build')}.artifactId`), failOn: 'high' }),
    successCriteria: {
      description: 'No high or critical finding',
      assert: expr('$count($output.findings[severity in ["high", "critical"]]) = 0'),
    },
    estimatedDurationSeconds: 240,
  });

const testsAndScan: Method = {
  name: 'tests-and-scan',
  task: 'verify-build',
  expand: ({ params }) => [suite('unit', value(params.service)), suite('integration', value(params.service)), scan()],
};

const testsOnly: Method = {
  name: 'tests-only',
  task: 'verify-build',
  expand: ({ params }) => [suite('unit', value(params.service)), suite('integration', value(params.service))],
};

export const releaseMethods: readonly Method[] = [release, testsAndScan, testsOnly];

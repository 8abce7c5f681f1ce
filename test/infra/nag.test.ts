/**
 * cdk-nag's AwsSolutions pack over the stack in its shapes (built-in user pool; every option on; outside OIDC
 * issuer): no unsuppressed error or warning, every suppression with a written reason that some finding actually
 * needs, and the pack demonstrably live (without the suppressions it does fail).
 */
import { App, Aspects, type Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, type INagLogger, type NagLoggerSuppressedData } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { SUPPRESSIONS } from '../../infra/constructs/nag.ts';
import { CairnStack, configFromContext } from '../../infra/stack.ts';
import { FULL_CONTEXT, OIDC_CONTEXT, synthStack } from './synth-stack.ts';

/** Records every finding a suppression silenced, with the suppression's reason. */
class SuppressedFindings implements INagLogger {
  readonly seen: NagLoggerSuppressedData[] = [];
  onCompliance(): void {}
  onNonCompliance(): void {}
  onSuppressed(data: NagLoggerSuppressedData): void {
    this.seen.push(data);
  }
  onError(): void {}
  onSuppressedError(): void {}
  onNotApplicable(): void {}
}

let stacks: Stack[];
const suppressed = new SuppressedFindings();

beforeAll(() => {
  stacks = [{}, FULL_CONTEXT, OIDC_CONTEXT].map(
    (context) => synthStack(context, { nag: true, nagLoggers: [suppressed] }).stack,
  );
});

const findings = (stack: Stack, level: 'error' | 'warning'): string[] => {
  const annotations = Annotations.fromStack(stack);
  const pattern = Match.stringLikeRegexp('AwsSolutions-');
  const found = level === 'error' ? annotations.findError('*', pattern) : annotations.findWarning('*', pattern);
  return found.map((f) => `${f.id}: ${String(f.entry.data).split('\n')[0]}`);
};

describe('AwsSolutionsChecks', () => {
  it('find no unsuppressed error in any configuration', () => {
    for (const stack of stacks) expect(findings(stack, 'error')).toEqual([]);
  });

  it('find no unsuppressed warning either', () => {
    for (const stack of stacks) expect(findings(stack, 'warning')).toEqual([]);
  });

  it('do fail the stack when the suppressions are left off (the check is live)', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [], stage: 'test', ...FULL_CONTEXT } });
    const stack = new CairnStack(app, 'Cairn-test', { config: configFromContext(app.node) });
    Aspects.of(app).add(new AwsSolutionsChecks());
    app.synth();
    const errors = findings(stack, 'error');
    for (const id of ['IAM5', 'APIG4', 'COG8', 'SMG4', 'SQS3']) {
      expect(
        errors.some((e) => e.includes(`AwsSolutions-${id}`)),
        id,
      ).toBe(true);
    }
  });
});

describe('suppressions', () => {
  it('each carry a reason a reviewer can act on', () => {
    for (const [name, suppression] of Object.entries(SUPPRESSIONS)) {
      expect(suppression.reason.length, name).toBeGreaterThanOrEqual(80);
    }
  });

  it('each silence at least one real finding, and only of their own rule', () => {
    for (const [name, suppression] of Object.entries(SUPPRESSIONS)) {
      const uses = suppressed.seen.filter((f) => f.suppressionReason.includes(suppression.reason));
      expect(uses.length, name).toBeGreaterThan(0);
      for (const use of uses) expect(use.ruleId, name).toBe(suppression.id);
    }
  });

  it('silence the outbox relay’s `*` (stream listing and tracing) on its own policy only, and its dead-letter queue', () => {
    const silenced = (name: keyof typeof SUPPRESSIONS): string[] => [
      ...new Set(
        suppressed.seen
          .filter((f) => f.suppressionReason.includes(SUPPRESSIONS[name].reason))
          .map((f) => `${f.resource.node.path} ${f.ruleId}${f.findingId ? `[${f.findingId}]` : ''}`),
      ),
    ];
    expect(silenced('outboxStreamRead')).toEqual([
      'Cairn-test/Functions/OutboxRole/DefaultPolicy/Resource AwsSolutions-IAM5[Resource::*]',
    ]);
    expect(silenced('outboxDeadLetterQueue')).toEqual(['Cairn-test/Outbox/DeadLetters/Resource AwsSolutions-SQS3']);
    // The Outbox policy's one `Resource::*` finding is silenced by the reason that names the stream listing.
    expect(silenced('lambdaTracing').filter((f) => f.includes('/OutboxRole/'))).toEqual([]);
    expect(silenced('deadLetterQueue')).toEqual(['Cairn-test/Events/TargetDeadLetters/Resource AwsSolutions-SQS3']);
    expect(silenced('asyncFailureQueue')).toEqual(['Cairn-test/Events/AsyncFailures/Resource AwsSolutions-SQS3']);
  });

  it('silence the timers’ schedule wildcard on the decider’s policy only, for cairn’s own schedule group', () => {
    const silenced = suppressed.seen
      .filter((f) => f.suppressionReason.includes(SUPPRESSIONS.timerSchedules.reason))
      .map((f) => `${f.resource.node.path} ${f.ruleId}[${f.findingId}]`);
    expect([...new Set(silenced)]).toEqual([
      'Cairn-test/Functions/DeciderRole/DefaultPolicy/Resource AwsSolutions-IAM5' +
        '[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/cairn-test/*]',
    ]);
    // The mailbox's dead-letter queue is a queue's redrive target: cdk-nag finds nothing to silence there.
    expect(suppressed.seen.filter((f) => f.resource.node.path.includes('/Mailbox/'))).toEqual([]);
  });

  it('never silence a whole rule for the stack or the app', () => {
    for (const stack of stacks) {
      expect(stack.node.metadata.filter((m) => m.type === 'cdk_nag')).toEqual([]);
      expect(stack.templateOptions.metadata?.cdk_nag).toBeUndefined();
    }
  });
});

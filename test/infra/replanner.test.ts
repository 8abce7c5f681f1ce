/**
 * The replanner Lambda in the stack: the StepFailedToReplanner rule of BUS_RULES targets it (with the shared retry
 * policy and dead-letter queue), it may ask the configured planning model and no other, it reaches a run only
 * through the run's mailbox (a revision is a proposal the run's decider answers), and it publishes nothing itself.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUS_RULES } from '../../shared/events/bus-rules.ts';
import {
  actionsOf,
  FULL_CONTEXT,
  logicalIdAt,
  type PolicyStatementJson,
  resourcesOf,
  statementsOf,
  synthStack,
} from './synth-stack.ts';

let plain: Template;
let full: Template;

beforeAll(() => {
  plain = synthStack().template;
  full = synthStack(FULL_CONTEXT).template;
});

const replannerStatements = (template: Template): PolicyStatementJson[] => {
  const policy = logicalIdAt(template, 'AWS::IAM::Policy', '/Functions/ReplannerRole/DefaultPolicy/Resource');
  return statementsOf(template)
    .filter(({ owner }) => owner === policy)
    .map(({ statement }) => statement);
};
const actions = (template: Template): string[] => replannerStatements(template).flatMap(actionsOf).sort();

describe('the replanner function', () => {
  it('is the target of the StepFailed rule, with the retry policy and the dead-letter queue', () => {
    const rule = BUS_RULES.find((r) => r.target === 'Replanner');
    const fn = logicalIdAt(plain, 'AWS::Lambda::Function', '/Functions/Replanner/Resource');
    const queue = logicalIdAt(plain, 'AWS::SQS::Queue', '/Events/TargetDeadLetters/Resource');
    plain.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: rule?.pattern,
      Targets: [
        {
          Arn: { 'Fn::GetAtt': [fn, 'Arn'] },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queue, 'Arn'] } },
          RetryPolicy: { MaximumRetryAttempts: 8 },
        },
      ],
    });
  });

  it('may invoke the configured planning model only when one is configured', () => {
    expect(actions(plain).filter((a) => a.startsWith('bedrock:'))).toEqual([]);
    const invoke = replannerStatements(full).filter((s) => actionsOf(s).includes('bedrock:InvokeModel'));
    expect(invoke.length).toBeGreaterThan(0);
    for (const statement of invoke) expect(JSON.stringify(resourcesOf(statement))).toContain('claude-3-5-haiku');
  });

  it('sends the run commands and calls no Step Functions action: the decider starts, stops and answers', () => {
    expect(actions(plain).filter((a) => a.startsWith('states:'))).toEqual([]);
    const queue = logicalIdAt(plain, 'AWS::SQS::Queue', '/Mailbox/Queue/Resource');
    expect(replannerStatements(plain).filter((s) => actionsOf(s).includes('sqs:SendMessage'))).toContainEqual({
      Effect: 'Allow',
      Action: 'sqs:SendMessage',
      Resource: { 'Fn::GetAtt': [queue, 'Arn'] },
    });
    // Its events (PlanRevised…) travel in the outbox of the writes that make them; the relay publishes them.
    expect(actions(plain).filter((a) => a.startsWith('events:'))).toEqual([]);
  });
});

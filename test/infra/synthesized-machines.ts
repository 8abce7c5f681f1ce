/**
 * The synthesized stack's two state machines for the tests of their ASL (state-machines, task-errors), with the
 * limits those tests read from the functions' configuration, and small readers of their states.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { type AslDefinition, type AslState, extractStateMachines } from '../../infra/local/synth.ts';
import { synthStack } from './synth-stack.ts';

export interface SynthesizedMachines {
  readonly template: Template;
  readonly run: AslDefinition;
  readonly step: AslDefinition;
}

export function synthMachines(): SynthesizedMachines {
  const { template } = synthStack({ maxSteps: '12', runDeadlineSeconds: 600 });
  const { run, step } = extractStateMachines(template.toJSON() as Parameters<typeof extractStateMachines>[0]);
  return { template, run, step };
}

export type Catcher = { ErrorEquals: string[]; Next: string; ResultPath?: string };
export type Retrier = { ErrorEquals: string[]; MaxAttempts?: number; BackoffRate?: number; IntervalSeconds?: number };

export const state = (definition: AslDefinition, name: string): AslState => {
  const found = definition.States[name];
  if (!found) throw new Error(`no state ${name}`);
  return found;
};
export const tasks = (definition: AslDefinition): [string, AslState][] =>
  Object.entries(definition.States).filter(([, s]) => s.Type === 'Task');
export const isCallback = (s: AslState): boolean => String(s.Resource).endsWith('.waitForTaskToken');
export const catchOf = (s: AslState, error: string): Catcher | undefined =>
  (s.Catch as Catcher[] | undefined)?.find((c) => c.ErrorEquals.includes(error));
export const successors = (s: AslState): string[] => [
  ...(typeof s.Next === 'string' ? [s.Next] : []),
  ...(typeof s.Default === 'string' ? [s.Default] : []),
  ...((s.Choices as { Next: string }[] | undefined) ?? []).map((c) => c.Next),
  ...((s.Catch as Catcher[] | undefined) ?? []).map((c) => c.Next),
];

/**
 * Plans and waits for the console's end-to-end tests, built from the local stack's conformance pack: a gated plan
 * (prepare → person approves → ship), a flat 64-step plan, a plan of folded groups, and helpers that wait on the API.
 */
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { type LocalStack, plan, step } from '../support/local-stack.ts';

export interface ApprovalView {
  approvalId: string;
  runId: string;
  stepId: string;
  status: string;
  comment?: string;
  output?: unknown;
}

export const gatedPlan = (stack: LocalStack, objective: string, timeoutSeconds = 600) =>
  plan(objective, [
    step(stack, 'prepare', T.echo, {
      title: 'Prepare the draft',
      input: { value: 'draft v1' },
      estimatedDurationSeconds: 2,
    }),
    step(stack, 'gate', T.approver, {
      title: 'Editor signs off',
      dependsOn: ['prepare'],
      input: { note: 'Check the numbers in section 2' },
      approval: { question: `May "${objective}" go out?`, timeoutSeconds },
      estimatedDurationSeconds: 30,
    }),
    step(stack, 'ship', T.echo, {
      title: 'Ship it',
      dependsOn: ['gate'],
      input: { value: 'shipped' },
      estimatedDurationSeconds: 1,
    }),
  ]);

/** 64 steps in 8 layers of 8; each step waits for two steps of the layer before. */
export function flatPlan(stack: LocalStack, objective: string) {
  const steps: PlanStep[] = [];
  for (let layer = 0; layer < 8; layer++) {
    for (let i = 0; i < 8; i++) {
      const dependsOn = layer === 0 ? [] : [`s${layer - 1}-${i}`, `s${layer - 1}-${(i + 1) % 8}`];
      steps.push(
        step(stack, `s${layer}-${i}`, T.echo, { title: `Layer ${layer} task ${i}`, dependsOn, input: { value: i } }),
      );
    }
  }
  return plan(objective, steps);
}

/** 8 groups of 7 steps (64 steps with the groups), the groups wired as a small DAG of depth 5. */
export function groupedPlan(stack: LocalStack, objective: string) {
  const groupDeps: Record<string, string[]> = {
    g1: [],
    g2: ['g1'],
    g3: ['g1'],
    g4: ['g2'],
    g5: ['g2', 'g3'],
    g6: ['g3'],
    g7: ['g4', 'g5'],
    g8: ['g6', 'g7'],
  };
  const steps: PlanStep[] = [];
  for (const [group, dependsOn] of Object.entries(groupDeps)) {
    steps.push({ id: group, title: `Workstream ${group.slice(1)}`, target: null, dependsOn });
    const inner = (id: string, deps: string[]) =>
      step(stack, `${group}.${id}`, T.echo, {
        title: `${group} ${id}`,
        parentId: group,
        dependsOn: deps.map((d) => `${group}.${d}`),
        input: { value: id },
      });
    steps.push(inner('a', []));
    for (const id of ['b', 'c', 'd', 'e', 'f']) steps.push(inner(id, ['a']));
    steps.push(inner('g', ['b', 'c', 'd', 'e', 'f']));
  }
  return plan(objective, steps);
}

/** Polls the API until the run has a pending approval; answers its view. */
export async function pendingApproval(stack: LocalStack, runId: string, timeoutMs = 20_000): Promise<ApprovalView> {
  const started = Date.now();
  for (;;) {
    const { json } = await stack.request('GET', `/approvals?status=pending&runId=${encodeURIComponent(runId)}`);
    const found = (json as { approvals: ApprovalView[] }).approvals[0];
    if (found) return found;
    if (Date.now() - started > timeoutMs) throw new Error(`run ${runId} asked for no approval within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function approvalOf(stack: LocalStack, approvalId: string): Promise<ApprovalView> {
  const { json } = await stack.request('GET', `/approvals/${encodeURIComponent(approvalId)}`);
  return (json as { approval: ApprovalView }).approval;
}

/**
 * Who may decide an approval, decided at the API's edge before a decision goes on: the approver role (authorize.ts
 * checks it for the route), the groups the gate names (`approval.approvers`) and the rule against self-approval (the
 * subject that started the run may not decide its approvals, unless the step says `approval.allowSelf: true`).
 *
 * Both the capability's catalog entry and the plan step may name a rule, and both hold: the caller must be in one of
 * the catalog's groups and in one of the step's; a step may allow self-approval unless its capability says
 * `allowSelf: false`. A plan (which a model or a client writes) can narrow the catalog's rule, never widen it.
 * An admin counts as in every group, but may not decide their own run's approvals either. A held plan revision
 * (kind `revision`) has no step: only the role and the rule against self-approval apply.
 *
 * The one static token of a stack without a tokens file (Caller.shared) is everyone at once: none of this applies.
 */
import type { Catalog } from '../plan/catalog.ts';
import type { ApproverRules, PlanStep } from '../plan/schema.ts';
import type { ApprovalRecord, RunRecord, Store } from '../ports/store.ts';
import { forbidden } from './authorize.ts';
import type { Caller } from './caller.ts';
import { holds } from './contract/roles.ts';
import { ApiError } from './errors.ts';

/** What holds for one approval: each list of groups must be met (one group of each), and whether self may decide. */
export interface ApprovalRule {
  readonly approverSets: readonly (readonly string[])[];
  readonly allowSelf: boolean;
}

/** The rule of a step's approvals, from its capability's catalog entry and the step itself. */
export function ruleOf(capability: ApproverRules | undefined, step: ApproverRules | undefined): ApprovalRule {
  const approverSets = [capability?.approvers, step?.approvers].filter((set) => set !== undefined);
  const allowSelf = (step?.allowSelf ?? capability?.allowSelf) === true && capability?.allowSelf !== false;
  return { approverSets, allowSelf };
}

/** The rule of a held plan revision: no groups, no self-approval. */
export const REVISION_RULE: ApprovalRule = { approverSets: [], allowSelf: false };

/** Why this caller may not decide an approval under this rule (a 403), or undefined when they may. */
export function refusalOf(
  caller: Caller,
  rule: ApprovalRule,
  context: { readonly startedBy: string | undefined; readonly runId: string },
): ApiError | undefined {
  if (caller.shared) return undefined;
  if (!holds(caller.roles, 'approver')) return forbidden(caller, 'approver');
  if (!rule.allowSelf && context.startedBy !== undefined && context.startedBy === caller.subject) {
    return new ApiError(
      403,
      'E_SELF_APPROVAL',
      `${caller.subject} started run ${context.runId}: someone else decides its approvals ` +
        '(unless the step says approval.allowSelf: true)',
    );
  }
  if (caller.roles.has('admin')) return undefined;
  const missing = rule.approverSets.find((set) => !set.some((group) => caller.groups.includes(group)));
  if (missing === undefined) return undefined;
  return new ApiError(
    403,
    'E_FORBIDDEN',
    `only ${missing.join(' or ')} may decide this approval; ${caller.subject} is in ` +
      `${caller.groups.length === 0 ? 'no group' : caller.groups.join(', ')}`,
    { details: { approvers: missing } },
  );
}

/** The step of the run's plan an approval is about: the current revision first, then older ones, newest first. */
export async function stepOfApproval(
  store: Store,
  run: RunRecord,
  approval: Pick<ApprovalRecord, 'stepId'>,
): Promise<PlanStep | undefined> {
  // The step normally lives in the current revision; a replan may have moved on since the approval was requested.
  const current = run.revision >= 1 ? await store.getPlanRevision(run.runId, run.revision) : undefined;
  const found = current?.plan.steps.find((s) => s.id === approval.stepId);
  if (found) return found;
  const older = (await store.listPlanRevisions(run.runId)).map((r) => r.revision).reverse();
  for (const revision of older) {
    if (revision < 1 || revision === run.revision) continue;
    const stored = await store.getPlanRevision(run.runId, revision);
    const step = stored?.plan.steps.find((s) => s.id === approval.stepId);
    if (step) return step;
  }
  return undefined;
}

/** What deciding an approval needs to know: its rule and who started its run. */
export interface ApprovalContext {
  readonly rule: ApprovalRule;
  readonly startedBy: string | undefined;
  readonly runId: string;
}

/**
 * Reads each approval's context, each run and step once per reader: a page of the inbox often holds many approvals
 * of one run. A reader lives for one request (the runs it read may change after it).
 */
export function approvalContextReader(store: Store, catalog: Catalog) {
  const runs = new Map<string, Promise<RunRecord | undefined>>();
  const steps = new Map<string, Promise<PlanStep | undefined>>();
  const once = <T>(cache: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> => {
    const known = cache.get(key);
    if (known !== undefined) return known;
    const reading = read();
    cache.set(key, reading);
    return reading;
  };
  return async (approval: ApprovalRecord): Promise<ApprovalContext> => {
    const run = await once(runs, approval.runId, () => store.getRun(approval.runId));
    const context = { startedBy: run?.startedBy, runId: approval.runId };
    if (approval.kind === 'revision' || run === undefined) return { ...context, rule: REVISION_RULE };
    const key = `${approval.runId}\u0000${approval.stepId}`;
    const found = await once(steps, key, () => stepOfApproval(store, run, approval));
    const capability = found?.target ? catalog.get(found.target)?.approval : undefined;
    return { ...context, rule: ruleOf(capability, found?.approval) };
  };
}

/** Throws the refusal, if any, of this caller deciding this approval. */
export async function checkMayDecide(
  read: ReturnType<typeof approvalContextReader>,
  caller: Caller,
  approval: ApprovalRecord,
): Promise<void> {
  if (caller.shared) return;
  const context = await read(approval);
  const refusal = refusalOf(caller, context.rule, context);
  if (refusal) throw refusal;
}

/** The approvals of a page this caller may decide, in order. */
export async function decidableBy(
  read: ReturnType<typeof approvalContextReader>,
  caller: Caller,
  approvals: readonly ApprovalRecord[],
): Promise<ApprovalRecord[]> {
  if (caller.shared) return [...approvals];
  if (!holds(caller.roles, 'approver')) return [];
  const contexts = await Promise.all(approvals.map((approval) => read(approval)));
  return approvals.filter((_, i) => {
    const context = contexts[i];
    return context !== undefined && refusalOf(caller, context.rule, context) === undefined;
  });
}

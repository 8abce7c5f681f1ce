/**
 * A test harness for the API: a small catalog, the DynamoDB store adapter on dynalite (a fresh table per harness),
 * Step Functions in memory behind the real adapter, and a request helper with the bearer token.
 */
import { afterAll } from 'vitest';
import { createDynamoRunLogOf } from '../../../shared/adapters/aws/dynamo-store.ts';
import { createInProcessPlanJobDispatcher } from '../../../shared/adapters/local/plan-job-dispatcher.ts';
import { createApp } from '../../../shared/api/app.ts';
import type { ApiDeps, PlanRequest } from '../../../shared/api/deps.ts';
import { runSettingsOf } from '../../../shared/composition/root.ts';
import { defaultSettings } from '../../../shared/config/settings.ts';
import type { RunCommandInput } from '../../../shared/engine/run/commands.ts';
import type { Reply } from '../../../shared/engine/run/decision.ts';
import type { RunSettings } from '../../../shared/engine/run/state.ts';
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import type { Plan, PlanStep } from '../../../shared/plan/schema.ts';
import { plannerError } from '../../../shared/planner/errors.ts';
import { stepExecutionName } from '../../../shared/ports/executions.ts';
import type { Mailbox } from '../../../shared/ports/mailbox.ts';
import type { RunLog } from '../../../shared/ports/run-log.ts';
import type { ApprovalRecord, RunRecord, StepRecord, Store } from '../../../shared/ports/store.ts';
import { createPlanJobs, runPlanJob } from '../../../shared/services/plan-jobs.ts';
import { type Deciding, decidingFor } from '../../support/deciding.ts';
import { startTestStore } from '../../support/dynalite.ts';
import { RecordedExecutions } from '../../support/recorded-executions.ts';

export const TOKEN = 'test-token';

/** The run settings of the harness's deciders (and the API's replan checks). */
export const SETTINGS: RunSettings = runSettingsOf(defaultSettings());

const valueContract = {
  type: 'object',
  required: ['value'],
  properties: { value: { type: 'string' } },
  additionalProperties: false,
};
const approverOutput = {
  type: 'object',
  required: ['approved'],
  properties: { approved: { type: 'boolean' }, note: { type: 'string' } },
  additionalProperties: false,
};

export const catalog = loadCatalog({
  capabilities: [
    {
      target: 'tool:echo',
      description: 'echo',
      inputSchema: valueContract,
      outputSchema: valueContract,
      sideEffect: 'none',
    },
    {
      target: 'human:approver',
      description: 'a gate',
      inputSchema: { type: 'object' },
      outputSchema: approverOutput,
      sideEffect: 'none',
    },
  ],
});

export const echoStep = (id: string, fields: Partial<PlanStep> = {}): PlanStep => ({
  id,
  title: `Step ${id}`,
  target: 'tool:echo',
  dependsOn: [],
  input: { value: id },
  inputSchema: valueContract,
  outputSchema: valueContract,
  ...fields,
});

export const gateStep = (id: string, fields: Partial<PlanStep> = {}): PlanStep => ({
  id,
  title: `Gate ${id}`,
  target: 'human:approver',
  dependsOn: [],
  input: {},
  inputSchema: { type: 'object' },
  outputSchema: approverOutput,
  approval: { question: 'May it go on?', timeoutSeconds: 300 },
  ...fields,
});

export const planOf = (steps: PlanStep[], objective = 'test objective'): Plan => ({
  schemaVersion: 1,
  revision: 1,
  objective,
  steps,
});

/** A planner that plans DIRECT requests as one step and refuses everything else like the real one. */
export const fakePlanner = {
  async plan(request: PlanRequest): Promise<Plan> {
    if (request.mode !== 'DIRECT' || request.directTarget === undefined) {
      throw plannerError('E_NO_METHOD', 'no method decomposes this objective');
    }
    if (request.directTarget !== 'tool:echo') throw plannerError('E_UNKNOWN_TARGET', `unknown ${request.directTarget}`);
    return planOf([echoStep('only')], request.objective);
  },
};

export interface Harness {
  readonly store: Store;
  /** The runs' log (their heads), as the deciders commit it. */
  readonly runLog: RunLog;
  readonly executions: RecordedExecutions;
  readonly deps: ApiDeps;
  /** The runs' deciders, behind the API's mailbox. */
  readonly deciding: Deciding;
  now: Date;
  /** Resolves once the planning jobs dispatched so far have finished. */
  jobsIdle(): Promise<void>;
  /** `PK SK` of every item in this harness's table. */
  storedKeys(): Promise<string[]>;
  request(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
}

/** What the harnesses of this test file opened; closed once the file is done. */
const opened: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(opened.splice(0).map((resource) => resource.stop()));
});

/** What a harness's replan jobs run: the replanner's replanRun (absent: replanning is not configured, 503). */
export type HarnessReplan = (request: {
  runId: string;
  reason: string;
  objective?: string;
}) => Promise<{ runId: string; revision?: number; approvalId?: string }>;

export async function harness(
  overrides: Partial<ApiDeps> & {
    readonly replanRun?: HarnessReplan;
    /** Wraps the deciders' mailbox as the API sees it (a slow one, say). */
    readonly wrapMailbox?: (mailbox: Mailbox) => Mailbox;
  } = {},
): Promise<Harness> {
  const { replanRun, wrapMailbox, ...deps } = overrides;
  // The store writes some timestamps itself (updatedAt, a revision's createdAt): on the harness clock.
  const tested = await startTestStore({ now: () => h.now });
  const executions = new RecordedExecutions();
  opened.push(tested, executions.sfn);
  const { store } = tested;
  const runLog = createDynamoRunLogOf(
    { client: tested.dynamo.client, tableName: tested.dynamo.tableName, now: () => h.now },
    store,
  );
  const deciding = decidingFor({ store, runLog, executions, catalog, clock: () => h.now, settings: SETTINGS });
  opened.push({ stop: async () => deciding.close() });
  let ids = 0;
  const jobs = createInProcessPlanJobDispatcher({
    plan: ({ planJobId }) => runPlanJob({ store, clock: () => h.now, planner: h.deps.planner }, planJobId),
    replan: ({ planJobId }) =>
      runPlanJob({ store, clock: () => h.now, ...(replanRun ? { replanRun } : {}) }, planJobId),
  });
  const h: Harness = {
    store,
    runLog,
    executions,
    deciding,
    now: new Date('2030-01-01T00:00:00.000Z'),
    deps: {
      store,
      executions,
      catalog,
      planner: { plan: (request) => fakePlanner.plan(request) },
      limits: { maxSteps: 8, maxDepth: 4 },
      mailbox: wrapMailbox === undefined ? deciding.mailbox : wrapMailbox(deciding.mailbox),
      // Replanning is configured where the harness is given a replanner's answer.
      runSettings: replanRun === undefined ? { ...SETTINGS, maxReplans: 0 } : SETTINGS,
      auth: { kind: 'token', token: TOKEN },
      clock: () => h.now,
      newId: () => `run-${++ids}`,
      // Planning jobs run in process after the request, as embedded; `jobsIdle` waits for them.
      planJobs: createPlanJobs({
        store,
        clock: () => h.now,
        newId: () => `job-${++ids}`,
        dispatcher: jobs,
      }),
      ...deps,
    },
    jobsIdle: () => jobs.idle(),
    storedKeys: () => tested.keys(),
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}`, ...options.headers };
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
        headers['content-type'] = 'application/json';
      }
      return app.request(path, { method, headers, ...(body === undefined ? {} : { body }) });
    },
  };
  const app = createApp(h.deps);
  return h;
}

export const runRecord = (runId: string, fields: Partial<RunRecord> = {}): RunRecord => ({
  runId,
  status: 'running',
  objective: `objective of ${runId}`,
  revision: 1,
  createdAt: '2030-01-01T00:00:00.000Z',
  updatedAt: '2030-01-01T00:00:00.000Z',
  replans: 0,
  ...fields,
});

export const stepRecord = (runId: string, stepId: string, fields: Partial<StepRecord> = {}): StepRecord => ({
  runId,
  stepId,
  status: 'pending',
  generation: 1,
  upstream: [],
  remaining: 0,
  released: [],
  attempts: 0,
  trace: [],
  updatedAt: '2030-01-01T00:00:00.000Z',
  ...fields,
});

export const approvalRecord = (approvalId: string, fields: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
  approvalId,
  runId: 'run-a',
  stepId: 'gate',
  generation: 1,
  kind: 'approval',
  status: 'pending',
  question: 'May it go on?',
  input: {},
  upstreamOutputs: { before: { value: 'x' } },
  taskToken: `token-${approvalId}`,
  createdAt: '2030-01-01T00:00:00.000Z',
  deadline: '2030-01-01T00:05:00.000Z',
  ...fields,
});

/** Seeds a running run with a plan revision and step records. */
export async function seedRun(
  h: Harness,
  runId: string,
  plan: Plan,
  steps: StepRecord[],
  run: Partial<RunRecord> = {},
) {
  await h.store.createRun(runRecord(runId, { objective: plan.objective, ...run }));
  await h.store.putPlanRevision(runId, plan, 'initial plan');
  await h.store.putSteps(steps);
  // What a decider keeps with its last decision: the steps counted by status (GET /runs reads them).
  const counts: Partial<Record<StepRecord['status'], number>> = {};
  for (const step of steps) counts[step.status] = (counts[step.status] ?? 0) + 1;
  const at = h.now.toISOString();
  const images = { steps: [], moved: [], approvals: [], revisions: [] };
  await h.runLog.commit({ runId, version: 1, at, events: [], images, effects: [], published: [], counts });
}

/**
 * The task token of a gate: starts the step execution of `stepId` (generation 1 unless given), which parks on a
 * token as the step machine's approval task does, and returns that token for the approval record.
 */
export async function gateToken(h: Harness, runId: string, stepId: string, generation = 1): Promise<string> {
  return h.executions.waitingToken(stepExecutionName(runId, stepId, generation), { runId, stepId, generation });
}

/** A mailbox that answers each command as `answer` says, and keeps what it was asked: the API's side alone. */
export function scriptedMailbox(answer: (runId: string, command: RunCommandInput) => Reply | Promise<Reply>): {
  readonly mailbox: Mailbox;
  readonly asked: { runId: string; command: RunCommandInput }[];
} {
  const asked: { runId: string; command: RunCommandInput }[] = [];
  return {
    asked,
    mailbox: {
      async send(runId, command) {
        asked.push({ runId, command });
      },
      async ask(runId, command) {
        asked.push({ runId, command });
        return answer(runId, command);
      },
      answer: async () => undefined,
    },
  };
}

/**
 * The HTN engine: decomposes the root task of an objective into plan steps, depth first, trying the methods of each
 * compound task in library order and backtracking when a method's expansion needs a target the catalog lacks. A
 * root method whose plan exceeds the limits is abandoned for the next one, so tight limits get a leaner plan.
 *
 * Ids follow the task tree (`research.acme.search`), so the same method choices give the same ids: a replan that
 * keeps a subtree keeps its ids. A compound task with several children becomes a group step; with one child, that
 * child takes the compound's place and id.
 */
import { buildGraph, depth } from '../../plan/graph.ts';
import { type Capability, PLAN_SCHEMA_VERSION, type Plan, type PlanStep, STEP_ID_PATTERN } from '../../plan/schema.ts';
import { plannerError } from '../errors.ts';
import { htnRationale } from '../rationale.ts';
import { clip, outputRef } from './text.ts';
import {
  type CompoundTask,
  type DecomposeInput,
  type Method,
  type MethodChoice,
  type MethodContext,
  type PrimitiveTask,
  type Refs,
  ROOT_TASK,
  type TaskNode,
  type TaskParams,
} from './types.ts';

export interface Decomposition {
  readonly plan: Plan;
  /** The method chosen for every compound task, in expansion order (what a replan varies). */
  readonly choices: readonly MethodChoice[];
}

const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const TITLE_MAX = 200;

/** Internal signal: this task cannot be decomposed here; the caller backtracks. */
class Dead extends Error {}

interface Entry {
  readonly id: string;
  /** The steps whose outputs stand for this node's result. */
  readonly results: readonly string[];
  readonly children?: Frame;
}

interface Frame {
  readonly parent: Frame | undefined;
  readonly entries: Map<string, Entry>;
}

interface Placement {
  readonly id: string;
  readonly parentId: string | undefined;
  readonly dependsOn: readonly string[];
}

const methodBug = (message: string, context: Record<string, unknown>) => plannerError('E_METHOD', message, context);

export function decompose(input: DecomposeInput): Decomposition {
  const { objective, limits, options = {} } = input;
  const capabilities = new Map(input.catalog.map((c) => [c.target, c]));
  const methodsByTask = new Map<string, Method[]>();
  for (const method of input.methods) {
    const list = methodsByTask.get(method.task) ?? [];
    if (list.some((m) => m.name === method.name))
      throw methodBug(`two methods named ${method.name} for task ${method.task}`, { method: method.name });
    list.push(method);
    methodsByTask.set(method.task, list);
  }
  const excluded = new Set((options.excludeMethods ?? []).map((e) => `${e.path}\u0000${e.method}`));
  const steps: PlanStep[] = [];
  const choices: MethodChoice[] = [];

  const resolveTarget = (target: string): Capability | undefined => {
    const replacement = options.substituteTargets?.[target];
    const original = capabilities.get(target);
    if (replacement !== undefined && original?.alternatives?.includes(replacement)) {
      const alternative = capabilities.get(replacement);
      if (alternative) return alternative;
    }
    return original;
  };

  const refsFor = (frame: Frame): Refs => {
    const lookup = (path: string): Entry | undefined => {
      const [head = '', ...rest] = path.split('.');
      let entry: Entry | undefined;
      for (let f: Frame | undefined = frame; f && !entry; f = f.parent) entry = f.entries.get(head);
      for (const segment of rest) entry = entry?.children?.entries.get(segment);
      return entry;
    };
    const resolve = (path: string): Entry => {
      const entry = lookup(path);
      if (!entry) throw methodBug(`reference to ${path}, which is not an earlier task in scope`, { path });
      return entry;
    };
    return {
      has: (path) => lookup(path) !== undefined,
      id: (path) => resolve(path).id,
      output: (path) => {
        const { results } = resolve(path);
        const [only] = results;
        if (only === undefined || results.length !== 1)
          throw methodBug(`${path} has ${results.length} result steps; use outputs()`, { path });
        return outputRef(only);
      },
      outputs: (path) => `[${resolve(path).results.map(outputRef).join(', ')}]`,
    };
  };

  const context = (task: string, path: string, params: TaskParams): MethodContext => ({
    objective,
    task,
    path,
    params,
    limits,
    has: (target) => resolveTarget(target) !== undefined,
  });

  const fitsLimits = (): boolean => steps.length <= limits.maxSteps && depth(buildGraph(steps)) <= limits.maxDepth;

  function expandPrimitive(node: PrimitiveTask, at: Placement, frame: Frame): Entry {
    const capability = resolveTarget(node.target);
    if (!capability) throw new Dead(`needs ${node.target}, which the catalog lacks`);
    const refs = refsFor(frame);
    const input = typeof node.input === 'function' ? node.input(refs) : node.input;
    const step: PlanStep = {
      id: at.id,
      title: clip(node.title, TITLE_MAX),
      ...(node.description === undefined ? {} : { description: node.description }),
      target: capability.target,
      ...(at.parentId === undefined ? {} : { parentId: at.parentId }),
      dependsOn: [...at.dependsOn],
      ...(input === undefined ? {} : { input: structuredClone(input) as PlanStep['input'] }),
      ...(node.when === undefined ? {} : { when: node.when(refs) }),
      inputSchema: structuredClone(capability.inputSchema),
      outputSchema: structuredClone(capability.outputSchema),
      ...(node.successCriteria === undefined ? {} : { successCriteria: { ...node.successCriteria } }),
      ...(node.maxRetries === undefined ? {} : { maxRetries: node.maxRetries }),
      ...(node.confidenceThreshold === undefined ? {} : { confidenceThreshold: node.confidenceThreshold }),
      ...(node.rollbackHint === undefined ? {} : { rollbackHint: node.rollbackHint }),
      ...(node.approval === undefined ? {} : { approval: { ...node.approval } }),
      ...(node.watches === undefined ? {} : { watches: [...node.watches] }),
      ...(node.estimatedDurationSeconds === undefined
        ? {}
        : { estimatedDurationSeconds: node.estimatedDurationSeconds }),
      status: 'pending',
      result: null,
      error: null,
    };
    steps.push(step);
    return { id: at.id, results: [at.id] };
  }

  function expandNode(node: TaskNode, at: Placement, frame: Frame): Entry {
    if (!STEP_ID_PATTERN.test(at.id)) throw methodBug(`step id ${at.id} is not a valid id`, { id: at.id });
    return node.kind === 'primitive' ? expandPrimitive(node, at, frame) : expandCompound(node, at, frame, false);
  }

  function checkNetwork(nodes: readonly TaskNode[], where: string): void {
    const seen = new Set<string>();
    for (const node of nodes) {
      if (!KEY_PATTERN.test(node.key) || seen.has(node.key))
        throw methodBug(`task key ${JSON.stringify(node.key)} under ${where || 'the root'} is invalid or repeated`, {
          key: node.key,
        });
      for (const key of node.after ?? [])
        if (!seen.has(key))
          throw methodBug(`${node.key} waits for ${key}, which is not an earlier sibling`, { key: node.key });
      seen.add(node.key);
    }
  }

  /** Expands a method's network at a placement; the root network has no group and unprefixed ids. */
  function expandNetwork(
    nodes: readonly TaskNode[],
    owner: CompoundTask,
    at: Placement,
    scope: Frame | undefined,
    root: boolean,
  ): Entry {
    if (nodes.length === 0) throw new Dead('its network is empty');
    checkNetwork(nodes, at.id);
    const frame: Frame = { parent: scope, entries: new Map() };
    if (!root && nodes.length === 1) {
      const only = nodes[0] as TaskNode;
      const entry = expandNode(only, at, frame);
      frame.entries.set(only.key, entry);
      return { id: entry.id, results: entry.results, children: frame };
    }
    if (!root)
      steps.push({
        id: at.id,
        title: clip(owner.title, TITLE_MAX),
        ...(owner.description === undefined ? {} : { description: owner.description }),
        target: null,
        ...(at.parentId === undefined ? {} : { parentId: at.parentId }),
        dependsOn: [...at.dependsOn],
        status: 'pending',
        result: null,
        error: null,
      });
    const awaited = new Set<string>();
    for (const node of nodes) {
      const dependsOn = (node.after ?? []).map((key) => (frame.entries.get(key) as Entry).id);
      for (const key of node.after ?? []) awaited.add(key);
      const id = root ? node.key : `${at.id}.${node.key}`;
      frame.entries.set(node.key, expandNode(node, { id, parentId: root ? undefined : at.id, dependsOn }, frame));
    }
    // A network's result is what nothing inside it waits for: its sinks, in order.
    const results = nodes
      .filter((n) => !awaited.has(n.key))
      .flatMap((n) => (frame.entries.get(n.key) as Entry).results);
    return { id: at.id, results, children: frame };
  }

  function expandCompound(node: CompoundTask, at: Placement, scope: Frame | undefined, root: boolean): Entry {
    // The methods tried before the one chosen, each with why it was passed over: part of the choice's reasoning.
    const passedOver: string[] = [];
    for (const method of methodsByTask.get(node.task) ?? []) {
      if (excluded.has(`${at.id}\u0000${method.name}`)) {
        passedOver.push(`${method.name} (excluded by a replan)`);
        continue;
      }
      const base = context(node.task, at.id, node.params ?? {});
      const bound = method.bind ? method.bind(base) : {};
      if (bound === undefined) {
        passedOver.push(`${method.name} (its precondition does not hold)`);
        continue;
      }
      const ctx = { ...base, params: { ...base.params, ...bound } };
      const stepMark = steps.length;
      const choiceMark = choices.length;
      choices.push({
        path: at.id,
        task: node.task,
        method: method.name,
        why: whyChosen(method, ctx, bound, passedOver),
      });
      try {
        const entry = expandNetwork(method.expand(ctx), node, at, scope, root);
        if (root && !fitsLimits()) throw new Dead('the plan would exceed the limits');
        return entry;
      } catch (error) {
        if (!(error instanceof Dead)) throw error;
        steps.length = stepMark;
        choices.length = choiceMark;
        passedOver.push(`${method.name} (${error.message})`);
      }
    }
    throw new Dead(`no method decomposes ${node.task} at ${at.id || 'the root'}`);
  }

  try {
    const rootTask: CompoundTask = { kind: 'compound', key: 'root', task: ROOT_TASK, title: objective };
    expandCompound(rootTask, { id: '', parentId: undefined, dependsOn: [] }, undefined, true);
  } catch (error) {
    if (!(error instanceof Dead)) throw error;
    throw plannerError(
      'E_NO_METHOD',
      'no method of the HTN library decomposes this objective with this catalog within the plan limits',
      { maxSteps: limits.maxSteps, maxDepth: limits.maxDepth },
    );
  }
  const rationale = htnRationale(choices);
  return {
    plan: { schemaVersion: PLAN_SCHEMA_VERSION, revision: 1, objective, ...(rationale ? { rationale } : {}), steps },
    choices,
  };
}

const WHY_PARAMS_MAX = 160;

/** The condition that selected a method (its own words, else what `bind` bound) and what was passed over first. */
function whyChosen(method: Method, ctx: MethodContext, bound: TaskParams, passedOver: readonly string[]): string {
  const params = Object.entries(bound)
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join(', ') : value}`)
    .join('; ');
  const own =
    method.why?.(ctx) ??
    (method.bind
      ? `its precondition holds${params ? ` (${clip(params, WHY_PARAMS_MAX)})` : ''}`
      : 'the catalog has every target it needs');
  return passedOver.length === 0 ? own : `${own}; passed over: ${passedOver.join(', ')}`;
}

/**
 * The vocabulary of the HTN (hierarchical task network) method library. A method decomposes one compound task into
 * a small network of subtasks: primitive tasks (one step over one catalog target) and further compound tasks. The
 * engine tries the methods of a task in the order they are listed; the first whose binding succeeds and whose whole
 * expansion fits the catalog wins. Methods are plain data plus pure functions, so planning is deterministic.
 */
import type { Capability } from '../../plan/schema.ts';
import type { PlanLimits } from '../../plan/validate.ts';

/** The task every objective starts from; methods for it match the objective text. */
export const ROOT_TASK = 'objective';

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Parameters a method binds (the subject of a research, a service, a version) and hands to its subtasks. */
export type TaskParams = Readonly<Record<string, string | readonly string[]>>;

/**
 * Builds JSONata fragments that read upstream outputs. A path names a node of the current network, or of an
 * enclosing one (innermost first), and may descend into a compound node's children: `evidence.logs`.
 */
export interface Refs {
  /** `$outputs.<id>` of the one step the path resolves to; throws when it resolves to several. */
  output(path: string): string;
  /** A JSONata array constructor of the outputs of every result step of the path (one or many). */
  outputs(path: string): string;
  /** The step id the path resolves to (a group id for a compound node with several children). */
  id(path: string): string;
  /** Whether the path resolves (a method may adapt to the alternative an earlier subtask chose). */
  has(path: string): boolean;
}

export interface StepDetails {
  readonly description?: string;
  readonly successCriteria?: { readonly description: string; readonly assert?: string };
  readonly maxRetries?: number;
  readonly confidenceThreshold?: number;
  readonly rollbackHint?: string;
  readonly approval?: { readonly question: string; readonly timeoutSeconds: number };
  readonly watches?: readonly string[];
  readonly estimatedDurationSeconds?: number;
}

/** One step over one catalog target. `key` is unique among its siblings and becomes the last segment of the id. */
export interface PrimitiveTask extends StepDetails {
  readonly kind: 'primitive';
  readonly key: string;
  readonly title: string;
  readonly target: string;
  /** Keys of earlier siblings this task waits for. */
  readonly after?: readonly string[];
  readonly input?: JsonValue | ((refs: Refs) => JsonValue);
  readonly when?: (refs: Refs) => string;
}

/** A task that methods decompose. With several children it becomes a group step (target null). */
export interface CompoundTask {
  readonly kind: 'compound';
  readonly key: string;
  readonly task: string;
  readonly title: string;
  readonly description?: string;
  readonly params?: TaskParams;
  readonly after?: readonly string[];
}

export type TaskNode = PrimitiveTask | CompoundTask;

export interface MethodContext {
  readonly objective: string;
  readonly task: string;
  /** Where the task sits in the plan: its step id ('' for the root). */
  readonly path: string;
  readonly params: TaskParams;
  readonly limits: PlanLimits;
  /** Whether the catalog offers a target (after substitutions). */
  has(target: string): boolean;
}

export interface Method {
  /** Unique within its task; recorded in the decomposition trace so a replan can choose another method. */
  readonly name: string;
  readonly task: string;
  /** Preconditions and parameter binding: undefined means the method does not apply. Default: applies as is. */
  readonly bind?: (context: MethodContext) => TaskParams | undefined;
  /**
   * Why the method was chosen, in words, given its bound parameters (the condition `bind` checked): recorded with
   * the choice and carried into the plan's rationale. Default: its precondition held, or it is the first listed.
   */
  readonly why?: (context: MethodContext) => string;
  /** The subtasks, in an order where every `after` names an earlier sibling. */
  readonly expand: (context: MethodContext) => readonly TaskNode[];
}

/** Which method decomposed which task, in expansion order. */
export interface MethodChoice {
  readonly path: string;
  readonly task: string;
  readonly method: string;
  /** Why this method: the condition that selected it, and the methods passed over before it with their reason. */
  readonly why?: string;
}

/** Knobs a replan turns; a first plan uses none. */
export interface DecomposeOptions {
  /** Methods not to use for the task at a path (`path` '' is the root). */
  readonly excludeMethods?: readonly { readonly path: string; readonly method: string }[];
  /** Target replacements, honoured only for a catalog `alternatives` entry of the replaced target. */
  readonly substituteTargets?: Readonly<Record<string, string>>;
}

export interface DecomposeInput {
  readonly objective: string;
  readonly catalog: readonly Capability[];
  readonly limits: PlanLimits;
  readonly methods: readonly Method[];
  readonly options?: DecomposeOptions;
}

export const primitive = (task: Omit<PrimitiveTask, 'kind'>): PrimitiveTask => ({ kind: 'primitive', ...task });
export const compound = (task: Omit<CompoundTask, 'kind'>): CompoundTask => ({ kind: 'compound', ...task });

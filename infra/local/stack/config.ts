/**
 * What the embedded stack is started with: its options, and the settings and catalog they make. The settings are
 * the Lambdas' (shared/config/settings.ts) with the options' limits, deadline and backoff over them, so the embedded
 * runtime and a deployment read the same names.
 */
import { type CatalogSource, deploymentCatalog } from '../../../shared/adapters/catalog-from-env.ts';
import { conformanceCatalog } from '../../../shared/capabilities/conformance.ts';
import demoCatalog from '../../../shared/catalog/demo.json' with { type: 'json' };
import { DEFAULT_BUILTIN_PACKS, LOCAL_REPLAN_WATCH_SECONDS } from '../../../shared/config/defaults.ts';
import { type Settings, settingsFromEnv } from '../../../shared/config/settings.ts';
import type { PutEventsLimits } from '../../../shared/events/put-events.ts';
import type { NotifierPlace } from '../../../shared/notify/compose.ts';
import { type Catalog, loadCatalog } from '../../../shared/plan/catalog.ts';
import type { Capability, CatalogDocument } from '../../../shared/plan/schema.ts';
import type { PlanLimits } from '../../../shared/plan/validate.ts';
import type { CapabilityBinding } from '../../../shared/ports/capabilities.ts';
import type { MetricsSink } from '../../../shared/ports/metrics.ts';
import type { Store } from '../../../shared/ports/store.ts';
import type { ServerTimeouts } from '../http-server.ts';
import type { LocalHandler } from '../local-executions.ts';
import type { AwsQuotasOptions } from '../quotas/aws-quotas.ts';
import type { SynthMissReason } from '../synth-cache.ts';

export interface LocalStackOptions {
  /**
   * Keep the store, the open executions and the conformance ledger in this directory (locked to this process) and
   * carry on the unfinished work found there; absent: everything in memory (tests, benches).
   */
  readonly dataDir?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly host?: string;
  /** The HTTP server's timeouts, each over its default (DEFAULT_LOCAL_SERVER_TIMEOUTS; infra/local/http-server.ts). */
  readonly serverTimeouts?: Partial<ServerTimeouts>;
  /** The API token; else the settings' (CAIRN_API_TOKEN); else a random one. */
  readonly token?: string | undefined;
  readonly conformance?: boolean;
  /**
   * The settings, by the Lambdas' names (shared/config/settings.ts: CAIRN_MAX_STEPS, CAIRN_TRACE_RETENTION,
   * CAIRN_WEBHOOK_SECRETS, ...); default: read from the process environment. The options below win over them.
   */
  readonly settings?: Settings;
  readonly limits?: Partial<
    PlanLimits & {
      maxReplans: number;
      runDeadlineSeconds: number;
      approvalTimeoutSeconds: number;
      replanWatchSeconds: number;
    }
  >;
  /** Compresses the step machine's retry backoff (tests); absent: the ASL's own seconds. */
  readonly backoffMs?: number;
  /** Compresses every Task's Retry pause (tests, chaos: platform faults retried at once); absent: the ASL's. */
  readonly retryIntervalMs?: number;
  /** Delay of the demo capabilities (ms); tests set 0. */
  readonly demoDelayMs?: number | { min: number; max: number };
  /** Retry delay base in seconds (the Backoff Wait); default: the settings' (CAIRN_RETRY_BASE_SECONDS). */
  readonly retryBaseSeconds?: number;
  /** Count state transitions, Lambda invocations and DynamoDB calls (benchmarks): see `stats()`. */
  readonly instrument?: boolean;
  /** Where execution failures are reported (default: stderr). */
  readonly onExecutionError?: (message: string) => void;
  /**
   * Demo targets whose provider is down (a permanent "provider unavailable" error on every call; the `npm start`
   * demo takes tool:web.search down so the replanner moves to its catalog alternative). Read on every call.
   */
  readonly demoOutage?: ReadonlySet<string>;
  /**
   * Wraps the store every handler uses (tests: a store that fails or crashes at a chosen call, to rehearse what a
   * throttle or a lost answer does between two writes).
   */
  readonly wrapStore?: (store: Store) => Store;
  /**
   * Wraps each Lambda handler the state machines call, by function key (tests: an invocation whose answer is lost
   * after it did its work, a delayed invocation), so Step Functions' own Retry and Catch are what repeats it. Key
   * `Outbox` wraps the outbox relay as the stream (and the redrive) call it, with the batch's records.
   */
  readonly wrapHandler?: (key: string, handler: LocalHandler) => LocalHandler;
  /** Lambda's concurrency per function key ('StepExecutor', ...): beyond it a Task is throttled (lambda-concurrency.ts). */
  readonly lambdaConcurrency?: Readonly<Record<string, number>>;
  /** Receives the coordinator's and the step runner's operational metrics (tests); none when absent. */
  readonly metrics?: MetricsSink;
  /** More capabilities with their builtin bindings (tests: alternatives the packs do not have). */
  readonly extraCapabilities?: {
    readonly capabilities: readonly Capability[];
    readonly bindings: Readonly<Record<string, CapabilityBinding>>;
  };
  /**
   * Where the synthesized state machines are cached by the hash of their sources (synth-cache.ts); `false`:
   * synthesize on every boot. Default `.cairn/cache` in the working directory.
   */
  readonly synthCacheDir?: string | false;
  /** Told before the state machines are synthesized (a cache miss: seconds), with why. */
  readonly onSynthesize?: (reason: SynthMissReason) => void;
  /** Faults to inject (`point:fault@probability,...`, docs/faults-and-chaos.md); absent: CAIRN_FAULTS. */
  readonly faults?: string;
  /** Their seed (same seed and spec: same decisions in the same call order); absent: CAIRN_FAULTS_SEED, else random. */
  readonly faultsSeed?: number;
  /** EventBridge's PutEvents limits on the bus (bus-limits.ts); lowered only by tests. */
  readonly putEventsLimits?: PutEventsLimits;
  /** The approval notifier's retry timing and fetch (tests); its URLs and secret are the settings' (CAIRN_NOTIFY_*). */
  readonly notifySending?: NotifierPlace['sending'];
  /**
   * The account's quotas, with AWS's default numbers and these lowered (quotas/aws-quotas.ts); `false`: none, whatever
   * the environment says; absent: CAIRN_AWS_QUOTAS (and CAIRN_LAMBDA_CONCURRENCY, CAIRN_SFN_START_RATE).
   */
  readonly awsQuotas?: AwsQuotasOptions | false;
  /**
   * The outbox redrive's sweep (infra/local/outbox-sweep.ts): every `everyMs` (default REDRIVE_EVERY_SECONDS; 0: only
   * on `LocalStack.redriveOutbox`) it relays again the batches the stream kept after its tries.
   */
  readonly outboxRedrive?: { readonly everyMs?: number };
}

/**
 * The demo catalog, plus the conformance pack when asked for, plus any extra capabilities, plus the ones of the
 * settings' catalog (CAIRN_CATALOG_FILE or CAIRN_CATALOG, e.g. from `cairn catalog import --mcp`), which replace
 * a builtin capability of the same target.
 */
export function localCatalog(
  conformance: boolean,
  extra: readonly Capability[] = [],
  configured: CatalogSource = {},
): Catalog {
  const demo = demoCatalog as unknown as CatalogDocument;
  const packs = conformance ? [...demo.capabilities, ...conformanceCatalog().capabilities] : demo.capabilities;
  const own =
    configured.file === undefined && configured.json === undefined ? [] : deploymentCatalog(configured).capabilities();
  if (extra.length === 0 && !conformance && own.length === 0) return loadCatalog(demo);
  const replaced = new Set(own.map((capability) => capability.target));
  const builtin = [...packs, ...extra].filter((capability) => !replaced.has(capability.target));
  return loadCatalog({ capabilities: [...builtin, ...own] });
}

/**
 * The settings of the embedded runtime: the Lambdas' (shared/config/settings.ts), read from `options.settings` or
 * else the process environment, with the options' own limits, deadline and backoff over them. The builtin packs
 * follow `conformance`; configured bindings (CAIRN_BINDINGS: MCP servers, HTTP endpoints...) are kept and win over
 * the packs for the targets they name.
 */
export function localSettings(options: LocalStackOptions = {}): Settings {
  const base = options.settings ?? settingsFromEnv(process.env);
  const given = <T>(value: T | undefined, fallback: T): T => (value === undefined ? fallback : value);
  return {
    ...base,
    limits: {
      maxSteps: given(options.limits?.maxSteps, base.limits.maxSteps),
      maxDepth: given(options.limits?.maxDepth, base.limits.maxDepth),
    },
    run: {
      ...base.run,
      maxReplans: given(options.limits?.maxReplans, base.run.maxReplans),
      runDeadlineSeconds: given(options.limits?.runDeadlineSeconds, base.run.runDeadlineSeconds),
      approvalTimeoutSeconds: given(options.limits?.approvalTimeoutSeconds, base.run.approvalTimeoutSeconds),
      // The embedded bus delivers within milliseconds: its watch need not wait out AWS's async retries.
      replanWatchSeconds: given(
        options.limits?.replanWatchSeconds,
        base.run.replanWatchSeconds ?? LOCAL_REPLAN_WATCH_SECONDS,
      ),
      retryBaseSeconds: given(options.retryBaseSeconds, base.run.retryBaseSeconds),
    },
    capabilities: {
      ...base.capabilities,
      builtins: options.conformance ? ['demo', 'conformance'] : DEFAULT_BUILTIN_PACKS,
    },
  };
}

/**
 * Incident triage: "triage the incident in checkout-api". Logs, metrics and recent deploys are read in parallel, an
 * SRE agent diagnoses, the on-call engineer approves the mitigation, the recommended action (rollback or restart,
 * chosen at run time by `when`) is applied, and the metrics are checked again.
 */
import { clip, expr, firstMatch, trimName } from '../text.ts';
import { compound, type Method, primitive, type Refs, ROOT_TASK, type TaskNode } from '../types.ts';

const PATTERNS = [
  /\b(?:triage|investigate|diagnose|debug|mitigate|respond\s+to|handle|look\s+into)\b[^\n]{0,120}?\b(?:incidents?|outages?|alerts?|alarms?|errors?|latency|degradation|5xx|failures?|spikes?|crash(?:es)?)\b[^\n]{0,120}?\b(?:in|on|for|of|affecting|at)\s+(?:the\s+)?(?<service>[A-Za-z0-9][A-Za-z0-9_.-]*)/i,
];

/** Words the pattern can capture that name a place, not a service. */
const NOT_SERVICES = new Set(['production', 'prod', 'staging', 'service', 'system', 'our', 'my', 'a', 'an', 'it']);

const name = (value: unknown): string => (typeof value === 'string' ? value : '');
const diagnosis = (r: Refs): string => r.output('diagnose');

const incidentTriage: Method = {
  name: 'incident-triage',
  task: ROOT_TASK,
  bind: ({ objective }) => {
    const service = trimName(firstMatch(PATTERNS, objective)?.service ?? '');
    return service && !NOT_SERVICES.has(service.toLowerCase()) ? { service } : undefined;
  },
  why: ({ params }) => `the objective reports an incident in the service ${name(params.service)}`,
  expand: ({ params }) => {
    const service = name(params.service);
    return [
      compound({
        key: 'evidence',
        task: 'gather-evidence',
        title: `Gather evidence on ${service}`,
        description: 'Read logs, metrics and recent deploys in parallel.',
        params,
      }),
      primitive({
        key: 'diagnose',
        title: `Diagnose the incident in ${service}`,
        description: 'Correlate the evidence into a root cause and one recommended mitigation.',
        target: 'agent:sre.diagnose',
        after: ['evidence'],
        input: (r) => ({
          service,
          logs: expr(`[${r.output('evidence.logs')}.entries]`),
          metrics: expr(`[${r.output('evidence.metrics')}.series]`),
          anomalies: expr(`[${r.output('evidence.metrics')}.anomalies]`),
          deploys: r.has('evidence.deploys') ? expr(`[${r.output('evidence.deploys')}.deploys]`) : [],
        }),
        successCriteria: { description: 'A root cause backed by the evidence and one recommended action' },
        confidenceThreshold: 0.75,
        estimatedDurationSeconds: 90,
      }),
      primitive({
        key: 'approve',
        title: `Approve the mitigation for ${service}`,
        target: 'human:oncall.approve',
        after: ['diagnose'],
        input: (r) => ({
          service,
          summary: expr(`${diagnosis(r)}.summary`),
          rootCause: expr(`${diagnosis(r)}.rootCause`),
          action: expr(`${diagnosis(r)}.action`),
        }),
        approval: {
          question: clip(
            `Apply the recommended mitigation to ${service}? The diagnosis and the action are attached.`,
            2000,
          ),
          timeoutSeconds: 1800,
        },
        estimatedDurationSeconds: 600,
      }),
      compound({
        key: 'mitigate',
        task: 'mitigate',
        title: `Mitigate the incident in ${service}`,
        description: 'Apply the action the diagnosis recommends; the other actions are skipped.',
        after: ['approve'],
        params,
      }),
      primitive({
        key: 'verify',
        title: `Verify that ${service} recovered`,
        target: 'tool:metrics.query',
        after: ['mitigate'],
        input: { service, metrics: ['error_rate', 'latency_p99'], sinceMinutes: 15 },
        successCriteria: {
          description: 'No anomaly remains after the mitigation',
          assert: expr('$count($output.anomalies) = 0'),
        },
        maxRetries: 5,
        estimatedDurationSeconds: 30,
      }),
    ];
  },
};

const logs = (service: string): TaskNode =>
  primitive({
    key: 'logs',
    title: `Query the error logs of ${service}`,
    target: 'tool:logs.query',
    input: { service, sinceMinutes: 60, level: 'error', limit: 500 },
    watches: [`logs:${service}`],
    estimatedDurationSeconds: 10,
  });

const metrics = (service: string): TaskNode =>
  primitive({
    key: 'metrics',
    title: `Query the metrics of ${service}`,
    target: 'tool:metrics.query',
    input: { service, metrics: ['error_rate', 'latency_p99', 'throughput', 'saturation'], sinceMinutes: 60 },
    watches: [`metrics:${service}`],
    estimatedDurationSeconds: 10,
  });

const deploys = (service: string): TaskNode =>
  primitive({
    key: 'deploys',
    title: `List the recent deploys of ${service}`,
    target: 'tool:deploys.list',
    input: { service, limit: 5 },
    watches: [`deploys:${service}`],
    estimatedDurationSeconds: 5,
  });

const fullEvidence: Method = {
  name: 'logs-metrics-deploys',
  task: 'gather-evidence',
  expand: ({ params }) => [logs(name(params.service)), metrics(name(params.service)), deploys(name(params.service))],
};

const basicEvidence: Method = {
  name: 'logs-metrics',
  task: 'gather-evidence',
  expand: ({ params }) => [logs(name(params.service)), metrics(name(params.service))],
};

const rollback = (service: string): TaskNode =>
  primitive({
    key: 'rollback',
    title: `Roll back ${service}`,
    target: 'tool:deploy.rollback',
    when: (r) => expr(`${diagnosis(r)}.action = "rollback"`),
    input: (r) => {
      const fallback = r.has('evidence.deploys') ? `${r.output('evidence.deploys')}.deploys[1].version` : '""';
      return {
        service,
        toVersion: expr(`$exists(${diagnosis(r)}.rollbackTo) ? ${diagnosis(r)}.rollbackTo : ${fallback}`),
        reason: expr(`${diagnosis(r)}.rootCause`),
      };
    },
    rollbackHint: `Roll ${service} forward again: tool:deploy.rollback to the fromVersion this step returned.`,
    maxRetries: 1,
    estimatedDurationSeconds: 300,
  });

const restart = (service: string): TaskNode =>
  primitive({
    key: 'restart',
    title: `Restart ${service}`,
    target: 'tool:service.restart',
    when: (r) => expr(`${diagnosis(r)}.action = "restart"`),
    input: (r) => ({ service, reason: expr(`${diagnosis(r)}.rootCause`), batchPercent: 25 }),
    rollbackHint: `A restart cannot be undone; if ${service} got worse, roll back its latest deploy instead.`,
    maxRetries: 1,
    estimatedDurationSeconds: 180,
  });

const rollbackOrRestart: Method = {
  name: 'rollback-or-restart',
  task: 'mitigate',
  expand: ({ params }) => [rollback(name(params.service)), restart(name(params.service))],
};

const rollbackOnly: Method = {
  name: 'rollback-only',
  task: 'mitigate',
  expand: ({ params }) => [rollback(name(params.service))],
};

const restartOnly: Method = {
  name: 'restart-only',
  task: 'mitigate',
  expand: ({ params }) => [restart(name(params.service))],
};

export const incidentMethods: readonly Method[] = [
  incidentTriage,
  fullEvidence,
  basicEvidence,
  rollbackOrRestart,
  rollbackOnly,
  restartOnly,
];

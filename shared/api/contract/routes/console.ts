/** The read models the console shows (console/data-routes.ts serves them): a step whole, revisions, timeline. */
import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { pathId, runParams, stepParams } from '../schemas/common.ts';
import { RevisionDiff, Revisions, StepDetail, Timeline } from '../schemas/console.ts';
import { revisionDiffQuery } from '../schemas/requests.ts';

export const getStep = defineRoute({
  operationId: 'getStep',
  method: 'get',
  path: '/runs/{runId}/steps/{stepId}',
  tag: 'steps',
  summary: 'Read one step whole',
  description: 'Its definition, record, every attempt of every generation with its evidence, approvals and events.',
  params: stepParams,
  responses: { 200: { description: 'The step.', schema: StepDetail } },
});

export const listRevisions = defineRoute({
  operationId: 'listRevisions',
  method: 'get',
  path: '/runs/{runId}/revisions',
  tag: 'steps',
  summary: "List the run's plan revisions, with what each changed",
  params: runParams,
  responses: { 200: { description: 'The revisions, oldest first.', schema: Revisions } },
});

export const getRevisionDiff = defineRoute({
  operationId: 'getRevisionDiff',
  method: 'get',
  path: '/runs/{runId}/revisions/{revision}/diff',
  tag: 'steps',
  summary: 'What a revision changed (against the one before it, or `against`)',
  params: z.object({ runId: pathId, revision: z.string().regex(/^\d+$/) }),
  query: revisionDiffQuery,
  responses: { 200: { description: 'The diff.', schema: RevisionDiff } },
});

export const getTimeline = defineRoute({
  operationId: 'getTimeline',
  method: 'get',
  path: '/runs/{runId}/timeline',
  tag: 'steps',
  summary: "The run's timeline: planned and actual slots, attempts, waits, critical paths",
  params: runParams,
  responses: { 200: { description: 'The timeline.', schema: Timeline } },
});

export const CONSOLE_ROUTES = [getStep, listRevisions, getRevisionDiff, getTimeline] as const;

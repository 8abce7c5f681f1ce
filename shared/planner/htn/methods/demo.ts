/**
 * The demo method library that ships with cairn. Order matters for the root task: specific objectives first
 * (competitor research, incident triage, release), the general fallback last, so every objective plans.
 */
import type { Method } from '../types.ts';
import { fallbackMethods } from './fallback.ts';
import { incidentMethods } from './incident.ts';
import { releaseMethods } from './release.ts';
import { researchMethods } from './research.ts';

export const DEMO_METHODS: readonly Method[] = [
  ...researchMethods,
  ...incidentMethods,
  ...releaseMethods,
  ...fallbackMethods,
];

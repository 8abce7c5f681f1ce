/** Every route of the API, in the order the document lists them. */
import { type Need, ROUTE_ROLES } from '../roles.ts';
import type { RouteDef } from '../route.ts';
import { APPROVAL_ROUTES } from './approvals.ts';
import { CHANGE_ROUTES } from './changes.ts';
import { CONSOLE_ROUTES } from './console.ts';
import { PLAN_ROUTES } from './plans.ts';
import { RUN_ROUTES } from './runs.ts';
import { SERVICE_ROUTES } from './service.ts';

const ALL = [
  ...RUN_ROUTES,
  ...CHANGE_ROUTES,
  ...CONSOLE_ROUTES,
  ...PLAN_ROUTES,
  ...APPROVAL_ROUTES,
  ...SERVICE_ROUTES,
] as const;

export const ROUTES: readonly RouteDef[] = ALL;

/** The operationId of every route that takes a bearer token (not public, not a signed webhook). */
export type BearerOperationId = Exclude<
  (typeof ALL)[number],
  { readonly access: 'public' | 'signature' }
>['operationId'];

/** The route table of roles (../roles.ts) is whole: a bearer route without its line there does not compile. */
export const ROUTE_NEEDS: Readonly<Record<BearerOperationId, Need>> = ROUTE_ROLES;

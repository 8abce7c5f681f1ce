/**
 * One decision in the making: the decider's own copy of the run, the events decided so far (each applied to the
 * copy at once, so what is decided next sees it) and the answer for whoever sent the command. Rules take a Decision
 * and emit events; nothing else changes the copy.
 */

import type { DomainEvent } from '../../ports/events.ts';
import { type Effect, effectsOf } from './effects.ts';
import type { RunEvent } from './events.ts';
import { evolveInto } from './evolve.ts';
import { publishedOf } from './published.ts';
import { type DraftState, draftOf, type RunState } from './state.ts';

/** What the decider answers the command's sender: the truth about what will happen. */
export type Reply =
  | { readonly ok: true; readonly value?: Readonly<Record<string, unknown>> }
  | {
      readonly ok: false;
      /** The HTTP status an API caller gets: 404 unknown, 409 conflict, 410 gone, 422 refused as given. */
      readonly status: 404 | 409 | 410 | 422;
      readonly code: string;
      readonly message: string;
      readonly details?: Readonly<Record<string, unknown>>;
    };

export const OK: Reply = { ok: true };

export const refuse = (
  status: 404 | 409 | 410 | 422,
  code: string,
  message: string,
  details?: Readonly<Record<string, unknown>>,
): Reply => ({ ok: false, status, code, message, ...(details === undefined ? {} : { details }) });

export class Decision {
  readonly draft: DraftState;
  readonly events: RunEvent[] = [];
  /** What the shell does once the events are committed (derived from each event as it is emitted). */
  readonly effects: Effect[] = [];
  /** What is published once the events are committed (the outbox). */
  readonly published: DomainEvent[] = [];
  reply: Reply = OK;
  /** When the command was taken: every event of this decision happens then. */
  readonly at: string;

  /** Decides on `draft` itself (the shell's copy of the run, changed in place), or on a copy of a state. */
  constructor(state: RunState | DraftState, at: string) {
    this.draft = 'open' in state ? state : draftOf(state);
    this.at = at;
  }

  emit(event: RunEvent): void {
    this.effects.push(...effectsOf(this.draft, event));
    evolveInto(this.draft, event);
    this.events.push(event);
    this.published.push(...publishedOf(this.draft, event));
  }

  get run() {
    return this.draft.run;
  }

  get plan() {
    return this.draft.plan;
  }

  step(stepId: string) {
    return this.draft.steps.get(stepId);
  }
}

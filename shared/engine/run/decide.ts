/**
 * The run's decider: `decide(state, command)` gives the events the command causes and the truthful answer for its
 * sender; `evolve(state, event)` (evolve.ts) applies one. Both are pure and total: a command that is a repeat, comes
 * too late or names something the run does not have decides nothing (or a refusal), and never throws for it.
 *
 * Commands are applied one at a time per run (the shell's mailbox), so no rule here races another: every rule reads
 * the run as the commands before it left it. After each command the run is looked at as a whole where that command
 * could have ended it (rules/ending.ts).
 */

import type { DomainEvent } from '../../ports/events.ts';
import type { RunCommand } from './commands.ts';
import { Decision, type Reply } from './decision.ts';
import type { Effect } from './effects.ts';
import type { RunEvent } from './events.ts';
import { activeDecider } from './rules/index.ts';
import { type DraftState, draftOf, type RunState } from './state.ts';

export interface Decided {
  readonly events: readonly RunEvent[];
  readonly effects: readonly Effect[];
  readonly published: readonly DomainEvent[];
  readonly reply: Reply;
  /** The state after the events (what evolving the command's state by them gives). */
  readonly state: RunState;
}

export function decide(state: RunState, command: RunCommand): Decided {
  const d = new Decision(draftOf(state), command.at);
  activeDecider(d, command);
  return {
    events: d.events,
    effects: d.effects,
    published: d.published,
    reply: d.reply,
    state: { ...d.draft, version: state.version + (d.events.length > 0 ? 1 : 0) },
  };
}

/**
 * decide on the shell's own draft, changed in place (no copy per command): the events, and the answer. The caller
 * owns the draft, and drops it when what it decided is not committed.
 */
export function decideInPlace(draft: DraftState, command: RunCommand): Omit<Decided, 'state'> {
  const d = new Decision(draft, command.at);
  activeDecider(d, command);
  return { events: d.events, effects: d.effects, published: d.published, reply: d.reply };
}

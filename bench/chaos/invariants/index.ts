/** Every invariant the chaos suite checks after each run, by name. */
import { checkAfterFinish } from './after-finish.ts';
import { checkDownstream } from './downstream.ts';
import { checkLedgerOnce } from './ledger.ts';
import { checkStepOnce } from './step-once.ts';
import { checkTerminal } from './terminal.ts';
import type { InvariantCheck, InvariantName, RunObservation, Violation } from './types.ts';

export const INVARIANTS: Readonly<Record<InvariantName, InvariantCheck>> = {
  terminal: checkTerminal,
  'ledger-once': checkLedgerOnce,
  'step-once': checkStepOnce,
  'downstream-of-failure': checkDownstream,
  'after-finish': checkAfterFinish,
};

export const checkRun = (run: RunObservation): Violation[] => Object.values(INVARIANTS).flatMap((check) => check(run));

/** The store's admission behaviour (test/support/store-behaviour-admission.ts) on the in-memory adapter. */
import { beforeEach, describe } from 'vitest';
import { createMemoryAdmissionStore } from '../../../../shared/adapters/memory/admission.ts';
import type { AdmissionStore } from '../../../../shared/ports/admission.ts';
import { describeAdmissionBehaviour } from '../../../support/store-behaviour-admission.ts';

describe('Store behaviour: in memory', () => {
  let store: AdmissionStore = createMemoryAdmissionStore();
  beforeEach(() => {
    store = createMemoryAdmissionStore();
  });
  describeAdmissionBehaviour(() => store);
});

import { beforeEach, describe } from 'vitest';
import { createMemoryStore, type MemoryStore } from '../../../../shared/adapters/memory/store.ts';
import { describeRunListingBehaviour } from '../../../support/store-behaviour-listing.ts';

describe('memory store', () => {
  let store: MemoryStore;
  beforeEach(() => {
    store = createMemoryStore();
  });
  describeRunListingBehaviour({
    store: () => store,
    // As the run log's projection writes a run image: the whole record, at a newer version.
    moveTo: async (run, status) => {
      const stored = store.tables.runs.get(run.runId);
      if (stored !== undefined) store.tables.putRun({ value: { ...stored.value, status }, v: stored.v + 1 });
    },
  });
});

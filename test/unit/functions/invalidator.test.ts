import { describe, expect, it } from 'vitest';
import { changeEventId, createHandler } from '../../../functions/invalidator.ts';
import { isValidationError } from '../../../shared/errors.ts';
import type { InvalidateResourceRequest } from '../../../shared/services/invalidator.ts';

function recording() {
  const requests: InvalidateResourceRequest[] = [];
  const handler = createHandler({
    invalidator: {
      invalidateResource: async (request) => {
        requests.push(request);
        return { runs: ['r1'] };
      },
    },
  });
  return { handler, requests };
}

const envelope = (detail: unknown, fields: Record<string, unknown> = {}) => ({
  version: '0',
  id: 'evt-1',
  'detail-type': 'ResourceChanged',
  source: 'cairn',
  time: '2030-01-01T00:00:00Z',
  detail,
  ...fields,
});

describe('invalidator handler', () => {
  it('invalidates the resource of a ResourceChanged event with its time and the delivery as the event id', async () => {
    const { handler, requests } = recording();

    const answer = await handler(envelope({ resourceKey: 'repo:main', source: 'github', deliveryId: 'd-9' }));

    expect(requests).toEqual([
      {
        resourceKey: 'repo:main',
        eventId: 'delivery:d-9#repo:main',
        changedAt: '2030-01-01T00:00:00Z',
        source: 'github',
      },
    ]);
    expect(answer).toMatchObject({ eventId: 'delivery:d-9#repo:main', resourceKey: 'repo:main', runs: ['r1'] });
  });

  it("throws a failed invalidation (no lease of its own to answer success) so Lambda's retries and destination get it", async () => {
    const refused = new Error('SQS throttled');
    const handler = createHandler({
      invalidator: {
        invalidateResource: async () => {
          throw refused;
        },
      },
    });

    await expect(handler(envelope({ resourceKey: 'repo:main', deliveryId: 'd-9' }))).rejects.toBe(refused);
  });

  it('falls back to the envelope id when the change carries no delivery id', async () => {
    const { handler, requests } = recording();
    await handler(envelope({ resourceKey: 'bucket/a' }, { id: 'evt-42' }));
    expect(requests[0]?.eventId).toBe('evt-42');
  });

  it('gives every key of one delivery its own event id, and every redelivery of a key the same', () => {
    expect(changeEventId('e1', { resourceKey: 'a', deliveryId: 'd' })).toBe(
      changeEventId('e2', { resourceKey: 'a', deliveryId: 'd' }),
    );
    expect(changeEventId('e1', { resourceKey: 'a', deliveryId: 'd' })).not.toBe(
      changeEventId('e1', { resourceKey: 'b', deliveryId: 'd' }),
    );
  });

  it('refuses another detail-type or a detail without a resource key, invalidating nothing', async () => {
    const { handler, requests } = recording();
    for (const bad of [
      envelope({ resourceKey: 'x' }, { 'detail-type': 'StepFailed' }),
      envelope({ source: 'github' }),
      envelope({ resourceKey: '' }),
      { detail: { resourceKey: 'x' } },
    ]) {
      expect(isValidationError(await handler(bad).catch((e: unknown) => e))).toBe(true);
    }
    expect(requests).toEqual([]);
  });
});

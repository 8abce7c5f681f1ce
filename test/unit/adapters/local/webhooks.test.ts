import { describe, expect, it } from 'vitest';
import { createMemoryReplayGuard, secretsFrom } from '../../../../shared/adapters/local/webhooks.ts';
import { settingsFromEnv } from '../../../../shared/config/settings.ts';

const clockAt = (state: { seconds: number }) => () => new Date(state.seconds * 1000);

describe('createMemoryReplayGuard', () => {
  it('sees a key first once until it expires, then again', async () => {
    const time = { seconds: 1000 };
    const guard = createMemoryReplayGuard({ clock: clockAt(time) });

    const first = await guard.firstSeen('k', 1300);
    const again = await guard.firstSeen('k', 1300);
    time.seconds = 1300;
    const atExpiry = await guard.firstSeen('k', 1600);
    time.seconds = 1601;
    const afterExpiry = await guard.firstSeen('k', 1900);

    expect([first, again, atExpiry, afterExpiry]).toEqual([true, false, false, true]);
  });

  it('keeps keys apart and forgets a released one', async () => {
    const guard = createMemoryReplayGuard({ clock: clockAt({ seconds: 0 }) });
    await guard.firstSeen('a', 100);
    await guard.firstSeen('b', 100);

    await guard.release?.('a');

    expect(await guard.firstSeen('a', 100)).toBe(true);
    expect(await guard.firstSeen('b', 100)).toBe(false);
  });

  it('forgets expired keys before live ones when it reaches its cap', async () => {
    const time = { seconds: 0 };
    const guard = createMemoryReplayGuard({ clock: clockAt(time), maxEntries: 10 });
    // The live keys are the older entries: dropping oldest-first would lose them.
    for (let i = 0; i < 5; i++) await guard.firstSeen(`live${i}`, 1000);
    for (let i = 0; i < 5; i++) await guard.firstSeen(`expiring${i}`, 10);
    time.seconds = 20;

    await guard.firstSeen('new', 1000);

    for (let i = 0; i < 5; i++) expect(await guard.firstSeen(`live${i}`, 1000)).toBe(false);
  });

  it('never holds more than its cap', async () => {
    const guard = createMemoryReplayGuard({ clock: clockAt({ seconds: 0 }), maxEntries: 10 });
    for (let i = 0; i < 25; i++) await guard.firstSeen(`k${i}`, 1000);

    // The newest are remembered; the oldest live ones were dropped to stay under the cap.
    expect(await guard.firstSeen('k24', 1000)).toBe(false);
    expect(await guard.firstSeen('k0', 1000)).toBe(true);
  });
});

describe('secretsFrom', () => {
  it('answers the secret of a configured source and nothing for others', async () => {
    const secrets = secretsFrom(
      settingsFromEnv({ CAIRN_WEBHOOK_SECRETS: '{"github":"g-secret","prices":"p-secret"}' }).webhooks.secrets,
    );

    expect(await secrets('prices')).toBe('p-secret');
    expect(await secrets('payroll')).toBeUndefined();
    expect(await secrets('__proto__')).toBeUndefined();
    expect(await secrets('constructor')).toBeUndefined();
  });

  it('configures no source when the variable is absent or blank', async () => {
    expect(await secretsFrom(settingsFromEnv({}).webhooks.secrets)('prices')).toBeUndefined();
    expect(
      await secretsFrom(settingsFromEnv({ CAIRN_WEBHOOK_SECRETS: '  ' }).webhooks.secrets)('prices'),
    ).toBeUndefined();
  });
});

import 'aws-sdk-client-mock-vitest/extend';
import {
  GetSecretValueCommand,
  InternalServiceError,
  InvalidRequestException,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createSecretsManagerWebhookSecrets,
  secretFromValue,
  webhookSecretName,
  webhookSecretsFor,
} from '../../../../shared/adapters/aws/webhook-secrets.ts';
import { isCairnError } from '../../../../shared/errors.ts';

const secretsManager = mockClient(SecretsManagerClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  secretsManager.restore();
});
const PREFIX = 'cairn/test/webhooks';

const notFound = () =>
  new ResourceNotFoundException({ message: "Secrets Manager can't find the secret", $metadata: {} });

function lookup(time = { ms: 0 }) {
  return createSecretsManagerWebhookSecrets({
    prefix: `${PREFIX}/`,
    client: new SecretsManagerClient({ region: 'us-east-1' }),
    cacheSeconds: 300,
    now: () => time.ms,
  });
}

beforeEach(() => {
  secretsManager.reset();
});

describe('createSecretsManagerWebhookSecrets', () => {
  it('reads the secret named <prefix>/<source>', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: 'prices-secret' });

    const secret = await lookup()('prices');

    expect(secret).toBe('prices-secret');
    expect(secretsManager).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: `${PREFIX}/prices` });
  });

  it('caches an answer for the cache time, then asks again', async () => {
    secretsManager
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: 'before-rotation' })
      .resolves({ SecretString: 'after-rotation' });
    const time = { ms: 0 };
    const secrets = lookup(time);

    const first = await secrets('prices');
    time.ms = 299_000;
    const cached = await secrets('prices');
    time.ms = 300_000;
    const refreshed = await secrets('prices');

    expect([first, cached, refreshed]).toEqual(['before-rotation', 'before-rotation', 'after-rotation']);
    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
  });

  it('shares one call among concurrent lookups', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: 's' });
    const secrets = lookup();

    await Promise.all([secrets('prices'), secrets('prices'), secrets('prices')]);

    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
  });

  it.each([
    ['a missing secret', notFound],
    [
      'a secret marked for deletion',
      () => new InvalidRequestException({ message: 'marked for deletion', $metadata: {} }),
    ],
    // What Secrets Manager answers for a name outside the function's grant (an unknown source): not an outage.
    [
      'a secret the function may not read',
      () => Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }),
    ],
  ])('answers no secret for %s and caches that too', async (_name, error) => {
    secretsManager.on(GetSecretValueCommand).rejects(error());
    const secrets = lookup();

    expect(await secrets('payroll')).toBeUndefined();
    expect(await secrets('payroll')).toBeUndefined();
    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
  });

  it('fails with a retryable error on an outage and does not cache it', async () => {
    secretsManager
      .on(GetSecretValueCommand)
      .rejectsOnce(new InternalServiceError({ message: 'boom', $metadata: {} }))
      .resolves({ SecretString: 'prices-secret' });
    const secrets = lookup();

    const failure = await secrets('prices').catch((error: unknown) => error);
    const retried = await secrets('prices');

    expect(isCairnError(failure) && failure.name === 'WebhookSecretError' && failure.retryable).toBe(true);
    expect(retried).toBe('prices-secret');
  });

  it('reads a binary secret as UTF-8 text', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({ SecretBinary: new TextEncoder().encode('binary-secret') });

    expect(await lookup()('prices')).toBe('binary-secret');
  });
});

describe('secretFromValue', () => {
  it.each([
    ['plain text', 'abc', 'abc'],
    ['a JSON object with a secret field', '{"secret":"from-json"}', 'from-json'],
    ['text that only looks like JSON', '{not json', '{not json'],
    ['an empty string', '', undefined],
    ['an empty secret field', '{"secret":""}', undefined],
  ])('reads %s', (_name, value, expected) => {
    expect(secretFromValue(value)).toBe(expected);
  });
});

describe('webhookSecretsFor', () => {
  it('configures no source and calls nothing without a prefix (CAIRN_WEBHOOK_SECRET_PREFIX)', async () => {
    const secrets = webhookSecretsFor(undefined, new SecretsManagerClient({ region: 'us-east-1' }));

    expect(await secrets('prices')).toBeUndefined();
    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 0);
  });

  it('looks secrets up under the prefix', async () => {
    secretsManager.on(GetSecretValueCommand).rejects(notFound());
    const secrets = webhookSecretsFor('cairn/prod/webhooks', new SecretsManagerClient({ region: 'us-east-1' }));

    await secrets('github');

    expect(secretsManager).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: 'cairn/prod/webhooks/github' });
  });

  it('joins prefix and source with exactly one slash', () => {
    expect(webhookSecretName('a/b', 'c')).toBe('a/b/c');
    expect(webhookSecretName('a/b//', 'c')).toBe('a/b/c');
  });
});

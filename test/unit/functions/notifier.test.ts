import { describe, expect, it } from 'vitest';
import { createHandler } from '../../../functions/notifier.ts';
import { settingsFromEnv } from '../../../shared/config/settings.ts';
import type { BusEvent, Notifier } from '../../../shared/notify/notifier.ts';

function fakeNotifier() {
  const calls: unknown[] = [];
  const arns: string[] = [];
  const notifier: Notifier = {
    async handle(event: BusEvent) {
      calls.push(['handle', event['detail-type']]);
      return { sent: [], failed: [] };
    },
    async remind(approvalId: string) {
      calls.push(['remind', approvalId]);
      return { sent: [], failed: [] };
    },
  };
  const handler = createHandler({
    notifier: (arn) => {
      arns.push(arn);
      return notifier;
    },
  });
  return { handler, calls, arns };
}

const context = { invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:notifier' };

describe('notifier Lambda', () => {
  it('takes a reminder from its schedule and an approval event from the bus', async () => {
    const f = fakeNotifier();

    await f.handler({ 'cairn-notify': 'reminder', approvalId: 'a-1' }, context);
    await f.handler({ id: 'e', 'detail-type': 'ApprovalRequested', source: 'cairn', detail: {}, time: 'now' }, context);

    expect(f.calls).toEqual([
      ['remind', 'a-1'],
      ['handle', 'ApprovalRequested'],
    ]);
    expect(f.arns).toEqual([context.invokedFunctionArn, context.invokedFunctionArn]);
  });

  it('refuses an event that is neither, as a ValidationError', async () => {
    const f = fakeNotifier();

    await expect(f.handler({ hello: 'world' }, context)).rejects.toMatchObject({ name: 'ValidationError' });
  });
});

describe('notification settings', () => {
  const SECRET = 'whsec_MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=';

  it('reads the URLs, the secret and the console URL', () => {
    const { notify } = settingsFromEnv({
      CAIRN_NOTIFY_URL: 'https://a.example/h, http://localhost:9000/x',
      CAIRN_NOTIFY_SECRET: SECRET,
      CAIRN_CONSOLE_URL: 'https://cairn.example/console/',
    });

    expect(notify).toMatchObject({
      urls: ['https://a.example/h', 'http://localhost:9000/x'],
      secret: SECRET,
      consoleUrl: 'https://cairn.example/console/',
    });
    expect(settingsFromEnv({}).notify.urls).toEqual([]);
  });

  it.each([
    ['URLs without a secret', { CAIRN_NOTIFY_URL: 'https://a.example/h' }, /CAIRN_NOTIFY_SECRET is not set/],
    [
      'a URL that is not http(s)',
      { CAIRN_NOTIFY_URL: 'ftp://a.example', CAIRN_NOTIFY_SECRET: SECRET },
      /CAIRN_NOTIFY_URL/,
    ],
    ['a secret without whsec_', { CAIRN_NOTIFY_SECRET: 'hunter2-hunter2-hunter2-hunter2' }, /whsec_<base64/],
    ['a whsec_ key under 24 bytes', { CAIRN_NOTIFY_SECRET: 'whsec_c2hvcnQ=' }, /24\.\.64 bytes/],
  ])('refuses %s, naming the variable and never the secret', (_name, env, message) => {
    const attempt = () => settingsFromEnv(env);

    expect(attempt).toThrow(message);
    expect(attempt).not.toThrow(/hunter2|c2hvcnQ/);
  });
});

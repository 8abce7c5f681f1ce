/**
 * The approval notifier's settings (shared/notify): where notifications go and what signs them.
 *
 * - CAIRN_NOTIFY_URL: one or more absolute http(s) URLs, comma-separated (`npm start -- --notify-url`; CDK context
 *   `notifyUrls`); absent: no notifications.
 * - CAIRN_NOTIFY_SECRET: the Standard Webhooks secret, `whsec_<base64>` of 24..64 bytes (the embedded runtime).
 * - CAIRN_NOTIFY_SECRET_ARN: where the deployed notifier reads it instead (Secrets Manager).
 * - CAIRN_CONSOLE_URL: the console's URL, for the deep link of each notification.
 * - CAIRN_NOTIFY_SCHEDULE_GROUP, CAIRN_NOTIFY_SCHEDULER_ROLE_ARN: the deployed reminders (EventBridge Scheduler).
 */
import { z } from 'zod';
import { given, httpUrl, text } from './env-values.ts';

export interface NotifySettings {
  readonly urls: readonly string[];
  readonly secret: string | undefined;
  readonly secretArn: string | undefined;
  readonly consoleUrl: string | undefined;
  readonly scheduleGroup: string | undefined;
  readonly schedulerRoleArn: string | undefined;
}

const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

const urlList = given.transform((raw, ctx): readonly string[] => {
  if (raw === undefined) return [];
  const urls = raw.split(',').map((url) => url.trim());
  for (const url of urls) {
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (parsed?.protocol === 'https:' || parsed?.protocol === 'http:') continue;
    ctx.addIssue({
      code: 'custom',
      message: `must be absolute http(s) URLs, comma-separated, got ${JSON.stringify(url)}`,
    });
    return z.NEVER;
  }
  return [...new Set(urls)];
});

const secret = given.transform((raw, ctx) => {
  if (raw === undefined) return undefined;
  const key = SECRET_PATTERN.test(raw) && raw.length % 4 === 2 ? Buffer.from(raw.slice(6), 'base64') : undefined;
  if (key !== undefined && key.length >= 24 && key.length <= 64) return raw;
  // The value itself is never echoed: it is a secret.
  ctx.addIssue({ code: 'custom', message: 'must be a Standard Webhooks secret, whsec_<base64 of 24..64 bytes>' });
  return z.NEVER;
});

export const notifyEnvFields = {
  CAIRN_NOTIFY_URL: urlList,
  CAIRN_NOTIFY_SECRET: secret,
  CAIRN_NOTIFY_SECRET_ARN: text,
  CAIRN_CONSOLE_URL: httpUrl,
  CAIRN_NOTIFY_SCHEDULE_GROUP: text,
  CAIRN_NOTIFY_SCHEDULER_ROLE_ARN: text,
};

type NotifyEnv = {
  readonly CAIRN_NOTIFY_URL: readonly string[];
  readonly CAIRN_NOTIFY_SECRET?: string | undefined;
  readonly CAIRN_NOTIFY_SECRET_ARN?: string | undefined;
  readonly CAIRN_CONSOLE_URL?: string | undefined;
  readonly CAIRN_NOTIFY_SCHEDULE_GROUP?: string | undefined;
  readonly CAIRN_NOTIFY_SCHEDULER_ROLE_ARN?: string | undefined;
};

/** Notifications are signed: URLs without a secret (or where to read one) is a mistake, named. */
export function checkNotifyEnv(v: NotifyEnv, ctx: z.RefinementCtx): void {
  if (v.CAIRN_NOTIFY_URL.length > 0 && v.CAIRN_NOTIFY_SECRET === undefined && v.CAIRN_NOTIFY_SECRET_ARN === undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['CAIRN_NOTIFY_SECRET'],
      message:
        'is not set: notifications to CAIRN_NOTIFY_URL are signed with it (npx --no cairn webhook secret makes one)',
    });
}

export const notifySettingsOf = (v: NotifyEnv): NotifySettings => ({
  urls: v.CAIRN_NOTIFY_URL,
  secret: v.CAIRN_NOTIFY_SECRET,
  secretArn: v.CAIRN_NOTIFY_SECRET_ARN,
  consoleUrl: v.CAIRN_CONSOLE_URL,
  scheduleGroup: v.CAIRN_NOTIFY_SCHEDULE_GROUP,
  schedulerRoleArn: v.CAIRN_NOTIFY_SCHEDULER_ROLE_ARN,
});

/**
 * `cairn webhook sign [--secret <s>] [--id <id>] [--timestamp <unix>] [--legacy] [--curl | --json] < body`: prints
 * the headers a delivery of that body needs, computed exactly as `POST /webhooks/{source}` checks them (Standard
 * Webhooks; `--legacy`: cairn's earlier X-Cairn-* headers, timestamp-bound). `cairn webhook secret`: a new
 * `whsec_` secret. For people wiring a sender or a receiver, for curl, and for tests. Exit 0, or 2 on bad usage.
 */
import { newMessageId, newWebhookSecret, signLegacy, signStandard, sourceKey } from '../../webhooks/signature.ts';
import { type CommandRun, EXIT_OK, UsageError } from '../io.ts';
import { HELP, InputError, parseStrict, runLocalCommand } from '../local-command.ts';

const USAGE = `usage: cairn webhook sign [--secret <secret>] [--id <id>] [--timestamp <unix seconds>] [--legacy]
                          [--curl | --json] < body
       cairn webhook secret

sign: reads the request body from standard input and prints the Standard Webhooks headers for it: webhook-id,
webhook-timestamp and webhook-signature (v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body bytes>">). The key is
a whsec_<base64> secret's decoded bytes, another secret's own bytes. Send the body byte for byte as it was signed
(curl --data-binary @file) within 5 minutes; a message id is taken once.

  --secret <s>     the source's signing secret (default: $CAIRN_WEBHOOK_SECRET, which keeps it out of the
                   process list and the shell history)
  --id <id>        the message id (default: a new msg_… id; the same id on a retry of the same message)
  --timestamp <n>  Unix seconds to sign (default: now)
  --legacy         print X-Cairn-Timestamp and X-Cairn-Signature (sha256=<hex HMAC of "<timestamp>.<body>">)
  --curl           print the headers as curl arguments: curl $(cairn webhook sign --curl < f) --data-binary @f URL
  --json           print the headers as one JSON object

secret: prints a new random whsec_ secret (32 bytes), for a webhook source or CAIRN_NOTIFY_SECRET.
`;

interface Options {
  readonly subcommand: 'sign' | 'secret';
  readonly secret: string;
  readonly id: string;
  readonly timestamp: number;
  readonly curl: boolean;
  readonly json: boolean;
  readonly legacy: boolean;
}

function parseOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Options | typeof HELP {
  const { values, positionals } = parseStrict(argv, {
    secret: { type: 'string' },
    id: { type: 'string' },
    timestamp: { type: 'string' },
    curl: { type: 'boolean' },
    json: { type: 'boolean' },
    legacy: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return HELP;
  if (values.curl === true && values.json === true) throw new UsageError('--curl and --json are two outputs: pick one');
  const given = positionals[0];
  if (given === undefined) throw new UsageError('missing the subcommand (sign or secret)');
  if (given !== 'sign' && given !== 'secret') throw new UsageError(`unknown subcommand "${given}"`);
  const subcommand: Options['subcommand'] = given;
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const base = { subcommand, curl: values.curl === true, json: values.json === true, legacy: values.legacy === true };
  if (subcommand === 'secret') return { ...base, secret: '', id: '', timestamp: 0 };
  const secret = values.secret ?? env.CAIRN_WEBHOOK_SECRET ?? '';
  if (secret === '') throw new UsageError('missing the secret: pass --secret or set CAIRN_WEBHOOK_SECRET');
  try {
    sourceKey(secret);
  } catch (error) {
    throw new UsageError(`--secret: ${(error as Error).message}`);
  }
  const text = values.timestamp;
  if (text !== undefined && !/^\d{1,12}$/.test(text))
    throw new UsageError(`--timestamp must be Unix seconds, got "${text}"`);
  const id = values.id ?? newMessageId();
  if (!/^[\x21-\x7e]{1,256}$/.test(id)) throw new UsageError('--id must be 1-256 visible ASCII characters');
  if (values.legacy === true && values.id !== undefined) throw new UsageError('--id is a Standard Webhooks header');
  return { ...base, secret, id, timestamp: text === undefined ? Math.floor(Date.now() / 1000) : Number(text) };
}

export const run: CommandRun = (argv, io) =>
  runLocalCommand(
    'webhook',
    USAGE,
    io,
    () => parseOptions(argv, io.env),
    async (options) => {
      if (options.subcommand === 'secret') {
        io.stdout(`${newWebhookSecret()}\n`);
        return EXIT_OK;
      }
      if (!io.readStdin) throw new InputError('no standard input to read the body from');
      const body = await io.readStdin();
      const key = sourceKey(options.secret);
      const headers: Readonly<Record<string, string>> = options.legacy
        ? signLegacy(key, body, options.timestamp)
        : signStandard(key, { id: options.id, timestamp: options.timestamp, body });
      const names = Object.keys(headers);
      // Without a space after the colon each header stays one word through the shell's unquoted $(...) splitting
      // (a Standard signature is base64: no spaces either).
      if (options.json) io.stdout(`${JSON.stringify(headers)}\n`);
      else
        io.stdout(
          options.curl
            ? `${names.map((name) => `-H ${name}:${headers[name]}`).join(' ')}\n`
            : names.map((name) => `${name}: ${headers[name]}\n`).join(''),
        );
      return EXIT_OK;
    },
  );

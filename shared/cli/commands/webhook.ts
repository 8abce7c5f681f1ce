/**
 * `cairn webhook sign [--secret <s>] [--timestamp <unix>] [--curl] < body`: prints the two headers a delivery of
 * that body needs, computed exactly as `POST /webhooks/{source}` checks them. For people wiring a sender, for curl,
 * and for tests. Exit 0, or 2 on bad usage.
 */
import { SIGNATURE_HEADER, signWebhook, signWebhookBody, TIMESTAMP_HEADER } from '../../api/webhook-signature.ts';
import { type CommandRun, EXIT_OK, UsageError } from '../io.ts';
import { HELP, InputError, parseStrict, runLocalCommand } from '../local-command.ts';

const USAGE = `usage: cairn webhook sign [--secret <secret>] [--timestamp <unix seconds>] [--curl | --json] < body

Reads the request body from standard input and prints the ${TIMESTAMP_HEADER} and ${SIGNATURE_HEADER}
headers for it (HMAC-SHA256 with the source's secret over "<timestamp>.<body bytes>"). Send the body byte for
byte as it was signed (curl --data-binary @file), within the replay window (default 5 minutes).

  --secret <s>     the source's signing secret (default: $CAIRN_WEBHOOK_SECRET, which keeps it out of the
                   process list and the shell history)
  --timestamp <n>  Unix seconds to sign (default: now)
  --body-only      sign the body alone (the documented minimum; the timestamp is then checked but not signed)
  --curl           print the headers as curl arguments: curl $(cairn webhook sign --curl < f) --data-binary @f URL
  --json           print the headers as one JSON object
`;

interface Options {
  readonly secret: string;
  readonly timestamp: number;
  readonly curl: boolean;
  readonly json: boolean;
  readonly bodyOnly: boolean;
}

function parseOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Options | typeof HELP {
  const { values, positionals } = parseStrict(argv, {
    secret: { type: 'string' },
    timestamp: { type: 'string' },
    curl: { type: 'boolean' },
    json: { type: 'boolean' },
    'body-only': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) return HELP;
  if (values.curl === true && values.json === true) throw new UsageError('--curl and --json are two outputs: pick one');
  if (positionals.length === 0) throw new UsageError('missing the subcommand (sign)');
  if (positionals[0] !== 'sign') throw new UsageError(`unknown subcommand "${positionals[0]}"`);
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const secret = values.secret ?? env.CAIRN_WEBHOOK_SECRET ?? '';
  if (secret === '') throw new UsageError('missing the secret: pass --secret or set CAIRN_WEBHOOK_SECRET');
  const text = values.timestamp;
  if (text !== undefined && !/^\d{1,12}$/.test(text))
    throw new UsageError(`--timestamp must be Unix seconds, got "${text}"`);
  return {
    secret,
    timestamp: text === undefined ? Math.floor(Date.now() / 1000) : Number(text),
    curl: values.curl === true,
    json: values.json === true,
    bodyOnly: values['body-only'] === true,
  };
}

export const run: CommandRun = (argv, io) =>
  runLocalCommand(
    'webhook',
    USAGE,
    io,
    () => parseOptions(argv, io.env),
    async (options) => {
      if (!io.readStdin) throw new InputError('no standard input to read the body from');
      const sign = options.bodyOnly ? signWebhookBody : signWebhook;
      const headers = sign(options.secret, await io.readStdin(), options.timestamp);
      const lines = [TIMESTAMP_HEADER, SIGNATURE_HEADER] as const;
      // Without a space after the colon each header stays one word through the shell's unquoted $(...) splitting.
      if (options.json) io.stdout(`${JSON.stringify(headers)}\n`);
      else
        io.stdout(
          options.curl
            ? `${lines.map((name) => `-H ${name}:${headers[name]}`).join(' ')}\n`
            : lines.map((name) => `${name}: ${headers[name]}\n`).join(''),
        );
      return EXIT_OK;
    },
  );

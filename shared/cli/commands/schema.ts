/** `cairn schema`: prints the JSON Schema (Draft 2020-12) of plan format v1, generated from the zod schema. */
import { planJsonSchema } from '../../plan/schema.ts';
import { type CommandRun, EXIT_OK, EXIT_USAGE } from '../io.ts';

const USAGE = 'usage: cairn schema\n\nPrints the plan format v1 JSON Schema (Draft 2020-12).\n';

export const run: CommandRun = async (argv, io) => {
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    io.stdout(USAGE);
    return EXIT_OK;
  }
  if (argv.length > 0) {
    io.stderr(`cairn schema: unexpected argument "${argv[0]}"\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  io.stdout(`${JSON.stringify(planJsonSchema(), null, 2)}\n`);
  return EXIT_OK;
};

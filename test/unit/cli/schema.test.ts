import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { run } from '../../../shared/cli/commands/schema.ts';
import type { CliIo } from '../../../shared/cli/io.ts';
import { planJsonSchema } from '../../../shared/plan/schema.ts';
import { readFixture } from '../plan/plan-testkit.ts';

async function cairnSchema(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: {}, cwd: '.' };
  const code = await run(args, io);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('cairn schema', () => {
  it('prints the plan JSON Schema as pretty JSON', async () => {
    const result = await cairnSchema([]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(planJsonSchema());
    expect(result.stdout).toMatch(/^\{\n {2}"/);
  });

  it('prints a schema that accepts the good plans and rejects an extra field', async () => {
    const schema = JSON.parse((await cairnSchema([])).stdout);
    const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(schema);
    const good = JSON.parse(readFixture('plans/good/groups.json'));
    expect(validate(good)).toBe(true);
    expect(validate({ ...good, extra: 1 })).toBe(false);
  });

  it('exits 2 on unexpected arguments and 0 for --help', async () => {
    expect(await cairnSchema(['extra'])).toMatchObject({ code: 2, stdout: '' });
    expect((await cairnSchema(['--help'])).code).toBe(0);
  });
});

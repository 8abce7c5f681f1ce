/**
 * What a Lambda bundle carries besides its module: the API's console files and elkjs, and the catalog file from
 * context catalogFile. Bundling is skipped in these tests, so the afterBundling hook's commands are checked directly
 * and run with bash against a temporary output directory, as local bundling runs them.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  afterBundlingCommands,
  bundleFilesEnvironment,
  commandHooksOf,
  ELK_FILES,
  shellQuote,
} from '../../infra/constructs/bundle-files.ts';
import { FUNCTION_KEYS } from '../../infra/constructs/state-names.ts';
import { createWorkerEvaluator } from '../../shared/adapters/expressions/worker-evaluator.ts';
import { defaultExpressionLimits } from '../../shared/plan/expression-limits.ts';
import { logicalIdAt, synthStack } from './synth-stack.ts';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const demoCatalog = fileURLToPath(new URL('../../shared/catalog/demo.json', import.meta.url));

const variablesOf = (template: ReturnType<typeof synthStack>['template'], key: string): Record<string, unknown> => {
  const id = logicalIdAt(template, 'AWS::Lambda::Function', `/Functions/${key}/Resource`);
  const properties = template.findResources('AWS::Lambda::Function')[id]?.Properties as {
    Environment: { Variables: Record<string, unknown> };
  };
  return properties.Environment.Variables;
};

describe('the functions environment', () => {
  let template: ReturnType<typeof synthStack>['template'];
  beforeAll(() => {
    template = synthStack().template;
  });

  it('points the API, and only the API, at the console files in its bundle', () => {
    expect(variablesOf(template, 'Api').CAIRN_CONSOLE_DIR).toBe('/var/task/console');
    for (const key of FUNCTION_KEYS.filter((k) => k !== 'Api')) {
      expect(variablesOf(template, key)).not.toHaveProperty('CAIRN_CONSOLE_DIR');
    }
  });

  it('names no catalog file without context catalogFile', () => {
    for (const key of FUNCTION_KEYS) {
      expect(variablesOf(template, key)).not.toHaveProperty('CAIRN_CATALOG_FILE');
      expect(variablesOf(template, key)).not.toHaveProperty('CAIRN_CATALOG');
    }
  });

  it('gives every function CAIRN_CATALOG_FILE with a catalog file', () => {
    for (const key of FUNCTION_KEYS) {
      expect(bundleFilesEnvironment(key, { projectRoot, catalogFile: demoCatalog })).toMatchObject({
        CAIRN_CATALOG_FILE: '/var/task/catalog.json',
      });
    }
    expect(bundleFilesEnvironment('Planner', { projectRoot })).toEqual({});
  });
});

describe('the afterBundling hook', () => {
  it('copies the console folder and the elkjs files for the API', () => {
    const commands = commandHooksOf('Api', { projectRoot }).afterBundling('/in', '/out');
    expect(commands).toContain("cp -r '/in/console/.' '/out/console'");
    for (const file of ELK_FILES) {
      expect(commands).toContain(`cp '/in/node_modules/elkjs/${file}' '/out/node_modules/elkjs/${file}'`);
    }
    expect(commands.join('\n')).not.toContain('catalog.json');
  });

  it('builds the expression worker for the step executor, and only for it', () => {
    expect(commandHooksOf('StepExecutor', { projectRoot }).afterBundling('/in', '/out')).toEqual([
      "'/in/node_modules/.bin/esbuild' '/in/shared/adapters/expressions/worker.ts' --bundle --platform=node " +
        "--format=cjs --target=node24 --minify --log-level=warning '--outfile=/out/expression-worker.cjs'",
    ]);
    expect(bundleFilesEnvironment('StepExecutor', { projectRoot })).toEqual({
      CAIRN_EXPRESSION_WORKER: '/var/task/expression-worker.cjs',
    });
  });

  it('copies nothing for the other functions without a catalog file', () => {
    for (const key of FUNCTION_KEYS.filter((k) => k !== 'Api' && k !== 'StepExecutor')) {
      expect(commandHooksOf(key, { projectRoot }).afterBundling('/in', '/out')).toEqual([]);
    }
  });

  it('copies the catalog into every bundle, from the input dir when it lies in the project', () => {
    for (const key of FUNCTION_KEYS) {
      const commands = afterBundlingCommands(key, { projectRoot, catalogFile: demoCatalog }, '/in', '/out');
      expect(commands).toContain("cp '/in/shared/catalog/demo.json' '/out/catalog.json'");
    }
    const outside = join(tmpdir(), 'my catalog.json');
    expect(afterBundlingCommands('Validator', { projectRoot, catalogFile: outside }, '/in', '/out')).toEqual([
      `cp ${shellQuote(outside)} '/out/catalog.json'`,
    ]);
  });

  it('quotes paths so the shell keeps them whole', () => {
    const out = execFileSync('bash', ['-c', `printf '%s|' ${shellQuote("it's a $HOME path")}`], { encoding: 'utf8' });
    expect(out).toBe("it's a $HOME path|");
  });
});

describe('the afterBundling commands, run as local bundling runs them', () => {
  let work: string;
  let outputDir: string;
  let catalogFile: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'cairn-bundle-'));
    outputDir = join(work, 'asset out');
    mkdirSync(outputDir);
    catalogFile = join(work, 'custom catalog.json');
    writeFileSync(catalogFile, readFileSync(demoCatalog));
    for (const key of ['Api', 'StepExecutor'] as const)
      for (const command of afterBundlingCommands(key, { projectRoot, catalogFile }, projectRoot, outputDir)) {
        execFileSync('bash', ['-c', command], { cwd: projectRoot, stdio: 'pipe' });
      }
  }, 60_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('leaves the console files where CAIRN_CONSOLE_DIR points', () => {
    for (const file of ['index.html', 'console.css', 'favicon.svg']) {
      expect(readFileSync(join(outputDir, 'console', file))).toEqual(readFileSync(join(projectRoot, 'console', file)));
    }
    expect(existsSync(join(outputDir, 'console', 'js'))).toBe(true);
  });

  it('leaves elkjs where the bundled module resolves it', () => {
    const bundled = createRequire(join(outputDir, 'index.mjs'));
    expect(bundled.resolve('elkjs/package.json')).toBe(join(outputDir, 'node_modules', 'elkjs', 'package.json'));
    for (const file of ['elk-api.js', 'elk-worker.min.js']) {
      expect(existsSync(join(outputDir, 'node_modules', 'elkjs', 'lib', file))).toBe(true);
    }
  });

  it('leaves a working expression worker where CAIRN_EXPRESSION_WORKER points', async () => {
    const evaluator = createWorkerEvaluator({
      limits: defaultExpressionLimits(),
      workers: 1,
      workerFile: join(outputDir, 'expression-worker.cjs'),
    });
    try {
      const outcomes = await evaluator.evaluate({
        sources: ['{% $outputs.a.n + 1 %}'],
        bindings: { objective: '', outputs: { a: { n: 1 } } },
      });
      expect(outcomes).toEqual([{ ok: true, value: 2 }]);
    } finally {
      await evaluator.close();
    }
  });

  it('leaves the catalog where CAIRN_CATALOG_FILE points', () => {
    expect(readFileSync(join(outputDir, 'catalog.json'), 'utf8')).toBe(readFileSync(demoCatalog, 'utf8'));
  });
});

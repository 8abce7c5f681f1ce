/**
 * The files a Lambda bundle carries besides esbuild's one module: the API's operator console (the console/ folder and
 * the two elkjs browser files shared/api/console/assets.ts serves from node_modules), the step executor's expression
 * worker (shared/adapters/expressions/worker.ts, built by the same esbuild into a module of its own: plan
 * expressions run in child processes of the handler) and, with context catalogFile, the capability catalog (too
 * large for Lambda's 4 KB environment). They are copied by esbuild bundling's
 * afterBundling hook, as shell commands (`bash -c`, local bundling on Linux or macOS, no Docker), and the handlers
 * find them through the environment variables below.
 */
import { isAbsolute, relative, resolve } from 'node:path';
import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { FunctionKey } from './state-names.ts';

/** Where Lambda unpacks a function's bundle (its LAMBDA_TASK_ROOT). */
export const LAMBDA_TASK_ROOT = '/var/task';
/** The catalog's name in a bundle, and the console folder's. */
export const BUNDLED_CATALOG = 'catalog.json';
export const BUNDLED_CONSOLE = 'console';
/** The expression worker's module in a bundle, and its source in the project. */
export const BUNDLED_EXPRESSION_WORKER = 'expression-worker.cjs';
const EXPRESSION_WORKER_SOURCE = 'shared/adapters/expressions/worker.ts';
/** What the console serves from elkjs (see loadAssets and elkVendor); `package.json` gives the version. */
export const ELK_FILES = ['package.json', 'LICENSE.md', 'lib/elk-api.js', 'lib/elk-worker.min.js'] as const;

export interface BundleFilesOptions {
  /** The project root esbuild bundles from (NodejsFunction `projectRoot`). */
  readonly projectRoot: string;
  /** The checked catalog file (context catalogFile), absent for the bundled demo catalog. */
  readonly catalogFile?: string;
}

/** The console is the API's alone: no other handler serves it. */
const servesConsole = (key: FunctionKey): boolean => key === 'Api';
/** Plan expressions are evaluated where steps are claimed and verified: RunStep, in the step executor. */
const evaluatesExpressions = (key: FunctionKey): boolean => key === 'StepExecutor';

/** A POSIX shell word: single-quoted, so spaces and `$` in a path stay literal. */
export const shellQuote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

const join = (...parts: string[]): string => parts.join('/').replace(/\/{2,}/g, '/');

/**
 * The catalog's path as the bundling command sees it: below the input dir when it lies in the project (so a Docker
 * bundling, which mounts only the project, finds it too), else the absolute path (local bundling reads it in place).
 */
function catalogSource(options: BundleFilesOptions, inputDir: string, catalogFile: string): string {
  const inProject = relative(options.projectRoot, resolve(catalogFile));
  return inProject === '' || inProject.startsWith('..') || isAbsolute(inProject)
    ? resolve(catalogFile)
    : join(inputDir, inProject.split('\\').join('/'));
}

/** The shell commands that copy a function's extra files into its bundle (output) directory. */
export function afterBundlingCommands(
  key: FunctionKey,
  options: BundleFilesOptions,
  inputDir: string,
  outputDir: string,
): string[] {
  const commands: string[] = [];
  if (options.catalogFile !== undefined) {
    const source = catalogSource(options, inputDir, options.catalogFile);
    commands.push(`cp ${shellQuote(source)} ${shellQuote(join(outputDir, BUNDLED_CATALOG))}`);
  }
  if (evaluatesExpressions(key)) {
    const esbuild = join(inputDir, 'node_modules', '.bin', 'esbuild');
    commands.push(
      [
        shellQuote(esbuild),
        shellQuote(join(inputDir, EXPRESSION_WORKER_SOURCE)),
        '--bundle --platform=node --format=cjs --target=node24 --minify --log-level=warning',
        shellQuote(`--outfile=${join(outputDir, BUNDLED_EXPRESSION_WORKER)}`),
      ].join(' '),
    );
  }
  if (servesConsole(key)) {
    const consoleDir = join(outputDir, BUNDLED_CONSOLE);
    commands.push(
      `mkdir -p ${shellQuote(consoleDir)}`,
      `cp -r ${shellQuote(`${join(inputDir, 'console')}/.`)} ${shellQuote(consoleDir)}`,
    );
    const elkFrom = join(inputDir, 'node_modules', 'elkjs');
    const elkTo = join(outputDir, 'node_modules', 'elkjs');
    commands.push(`mkdir -p ${shellQuote(join(elkTo, 'lib'))}`);
    for (const file of ELK_FILES) {
      commands.push(`cp ${shellQuote(join(elkFrom, file))} ${shellQuote(join(elkTo, file))}`);
    }
  }
  return commands;
}

/** NodejsFunction `bundling.commandHooks` for one function. */
export function commandHooksOf(key: FunctionKey, options: BundleFilesOptions): ICommandHooks {
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) => afterBundlingCommands(key, options, inputDir, outputDir),
  };
}

/** The environment that points a handler at the files its bundle carries. */
export function bundleFilesEnvironment(key: FunctionKey, options: BundleFilesOptions): Record<string, string> {
  return {
    ...(options.catalogFile === undefined ? {} : { CAIRN_CATALOG_FILE: `${LAMBDA_TASK_ROOT}/${BUNDLED_CATALOG}` }),
    ...(servesConsole(key) ? { CAIRN_CONSOLE_DIR: `${LAMBDA_TASK_ROOT}/${BUNDLED_CONSOLE}` } : {}),
    ...(evaluatesExpressions(key)
      ? { CAIRN_EXPRESSION_WORKER: `${LAMBDA_TASK_ROOT}/${BUNDLED_EXPRESSION_WORKER}` }
      : {}),
  };
}

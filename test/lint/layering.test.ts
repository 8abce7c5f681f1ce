/**
 * The layering rules live in biome.json (per-folder overrides of noRestrictedImports and noRestrictedGlobals). This
 * test plants files that break them, and files that keep them, into a scratch copy of the repository's layout with
 * the repository's own biome.json, runs Biome there and checks exactly which lines it flags: a rule that is deleted
 * or loosened fails here, and so does one that starts refusing what the layers are allowed to import.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIOME = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');

/** Which message a flagged line must carry (a word of it), by the kind of dependency it breaks. */
const AWS = 'imports no AWS SDK';
const CORE_ADAPTER = 'The domain core imports no adapter';
const CORE_UPWARD = 'Dependencies point down only';
const IO = 'The domain core does no I/O';
const CLOCK = 'The domain core reads no clock and sets no timer';
const CRYPTO = 'only createHash from node:crypto';
const CAPABILITY_ADAPTER = 'shared/capabilities imports no adapter';
const PORT = 'A port is an interface';
const PORT_AWS = 'A port names no AWS type';
const ADAPTER = 'Adapters implement ports';
const GLOBAL = 'noRestrictedGlobals';

/** Planted lines by file: the statement, and a word of the message expected (undefined: the layer may do it). */
const PLANTED: Readonly<Record<string, readonly (readonly [statement: string, expected: string | undefined])[]>> = {
  // The domain core: AWS, any adapter, the layers above it, node I/O and the clock.
  'shared/plan/planted.ts': [
    ["import { DynamoDBClient } from '@aws-sdk/client-dynamodb';", AWS],
    ["import { Logger } from '@aws-lambda-powertools/logger';", AWS],
    ["import { Stack } from 'aws-cdk-lib';", AWS],
    ["import { Table } from 'aws-cdk-lib/aws-dynamodb';", AWS],
    ["import { Construct } from 'constructs';", AWS],
    ["import { createDynamoStore } from '../adapters/aws/dynamo-store.ts';", CORE_ADAPTER],
    ["import type { Store } from '../adapters/local/event-bus.ts';", CORE_ADAPTER],
    ["import { httpCapability } from '../adapters/http-capability.ts';", CORE_ADAPTER],
    ["export { createCoordinator } from '../services/coordinator.ts';", CORE_UPWARD],
    ["export * from '../api/app.ts';", CORE_UPWARD],
    ["import { main } from '../cli/main.ts';", CORE_UPWARD],
    ["export const load = () => import('../../functions/planner.ts');", CORE_UPWARD],
    ["import { boot } from '../../infra/local/boot.ts';", CORE_UPWARD],
    ["import { readFileSync } from 'node:fs';", IO],
    ["import { readFile } from 'fs/promises';", IO],
    ["import * as net from 'node:net';", IO],
    ["import http from 'http';", IO],
    ["import { connect } from 'node:http2';", IO],
    ["import { spawn } from 'child_process';", IO],
    ["import { env } from 'node:process';", IO],
    ["import 'node:os';", IO],
    ["import { setTimeout as sleep } from 'node:timers/promises';", CLOCK],
    ["import { performance } from 'perf_hooks';", CLOCK],
    ["import { randomUUID } from 'node:crypto';", CRYPTO],
    ["import * as crypto from 'crypto';", CRYPTO],
    ["import { createHash } from 'node:crypto';", undefined],
    ["import { z } from 'zod';", undefined],
    ["import { isDeepStrictEqual } from 'node:util';", undefined],
    ["import { parsePlan } from './codec.ts';", undefined],
    ["import { ValidationError } from '../errors.ts';", undefined],
    ['export const region = process.env.AWS_REGION;', GLOBAL],
    ["export const get = () => fetch('https://example.com');", GLOBAL],
    ['export const later = (f: () => void) => setTimeout(f, 1);', GLOBAL],
  ],
  'shared/engine/replan/planted.ts': [
    ["import { createSfnExecutions } from '../../adapters/aws/sfn.ts';", CORE_ADAPTER],
    ["import { SFNClient } from '@aws-sdk/client-sfn';", AWS],
    ["import { x } from '../../services/replanner.ts';", CORE_UPWARD],
    ["import { writeFile } from 'node:fs/promises';", IO],
    // (here, not in shared/plan/planted.ts, where `crypto` names the namespace imported above)
    ['export const id = () => crypto.randomUUID();', GLOBAL],
    ["import type { Store } from '../../ports/store.ts';", undefined],
    ["import { planGraph } from '../../plan/graph.ts';", undefined],
  ],
  'shared/planner/htn/methods/planted.ts': [
    ["import { boot } from '../../../../infra/local/boot.ts';", CORE_UPWARD],
    ["import { model } from '../../../adapters/aws/bedrock.ts';", CORE_ADAPTER],
    ["import { lookup } from 'dns';", IO],
    ["import type { PlanModel } from '../../../ports/plan-model.ts';", undefined],
    ["import { replan } from '../../../engine/replan.ts';", undefined],
    ["import { createRoot } from '../../../composition/root.ts';", CORE_UPWARD],
  ],
  // The defaults and the settings parser are pure like the core: any layer may import them.
  'shared/config/planted.ts': [
    ["import { DynamoDBClient } from '@aws-sdk/client-dynamodb';", AWS],
    ["import { awsPlace } from '../adapters/aws/place.ts';", CORE_ADAPTER],
    ["import { createRoot } from '../composition/root.ts';", CORE_UPWARD],
    ["import { readFileSync } from 'node:fs';", IO],
    ['export const table = process.env.CAIRN_TABLE_NAME;', GLOBAL],
    ["import { z } from 'zod';", undefined],
    ["import { parseBuiltinPacks } from '../capabilities/runtime-registry.ts';", undefined],
    ["import { ValidationError } from '../errors.ts';", undefined],
  ],
  // The composition root builds the graph from every layer below it.
  'shared/composition/planted.ts': [
    ["import { createDynamoStore } from '../adapters/aws/dynamo-store.ts';", undefined],
    ["import { createCoordinator } from '../services/coordinator.ts';", undefined],
    ["import type { ApiDeps } from '../api/deps.ts';", undefined],
    ["import { settingsFromEnv } from '../config/settings.ts';", undefined],
  ],
  // Capabilities: no adapter, no AWS SDK; the rest of the core is theirs to use.
  'shared/capabilities/planted.ts': [
    ["import { lambdaCapability } from '../adapters/aws/lambda-capability.ts';", CAPABILITY_ADAPTER],
    ["export { httpCapability } from '../adapters/http-capability.ts';", CAPABILITY_ADAPTER],
    ["import { LambdaClient } from '@aws-sdk/client-lambda';", AWS],
    ["import type { CapabilityBinding } from '../ports/capabilities.ts';", undefined],
    ["import { TARGET_PATTERN } from '../plan/schema.ts';", undefined],
  ],
  // Ports: no adapter, no service, no AWS type.
  'shared/ports/planted.ts': [
    ["import type { DynamoStore } from '../adapters/aws/dynamo-store.ts';", PORT],
    ["import type { Coordinator } from '../services/coordinator.ts';", PORT],
    ["import type { Root } from '../composition/root.ts';", PORT],
    ["import type { AttributeValue } from '@aws-sdk/client-dynamodb';", PORT_AWS],
    ["import type { Plan } from '../plan/schema.ts';", undefined],
  ],
  // Adapters: nothing that composes them.
  'shared/adapters/aws/planted.ts': [
    ["import { createCoordinator } from '../../services/coordinator.ts';", ADAPTER],
    ["import { createApp } from '../../api/app.ts';", ADAPTER],
    ["import { main } from '../../cli/main.ts';", ADAPTER],
    ["import { handler } from '../../../functions/api.ts';", ADAPTER],
    ["import { boot } from '../../../infra/local/boot.ts';", ADAPTER],
    ["import { createRoot } from '../../composition/root.ts';", ADAPTER],
    ["import { settingsFromEnv } from '../../config/settings.ts';", undefined],
    ["import { DynamoDBClient } from '@aws-sdk/client-dynamodb';", undefined],
    ["import { readFile } from 'node:fs/promises';", undefined],
    ["import type { Store } from '../../ports/store.ts';", undefined],
    ["import { capabilityRequest } from '../../capabilities/wire.ts';", undefined],
    ["import { parseBindingsConfig } from '../../capabilities/registry.ts';", undefined],
  ],
  // The composition roots may import any layer.
  'functions/planted.ts': [
    ["import { createDynamoStore } from '../shared/adapters/aws/dynamo-store.ts';", undefined],
    ["import { createCoordinator } from '../shared/services/coordinator.ts';", undefined],
    ["import { readFile } from 'node:fs/promises';", undefined],
    ['export const table = process.env.CAIRN_TABLE_NAME;', undefined],
  ],
};

type Case = readonly [file: string, statement: string, expected: string | undefined];
const CASES: readonly Case[] = Object.entries(PLANTED).flatMap(([file, lines]) =>
  lines.map(([s, e]) => [file, s, e] as const),
);

const RULE_LINE = /^\S+ (\S+):(\d+):\d+: lint\/\w+\/(noRestrictedImports|noRestrictedGlobals): (.*)$/;

let scratch: string;
let flagged: Map<string, string>;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'cairn-layering-'));
  // The repository's own rules; only version control is off (the scratch directory is not a repository).
  const config = JSON.parse(readFileSync(join(ROOT, 'biome.json'), 'utf8')) as Record<string, unknown>;
  delete config.$schema;
  config.vcs = { enabled: false };
  writeFileSync(join(scratch, 'biome.json'), JSON.stringify(config));
  const files = new Map<string, string[]>();
  for (const [file, statement] of CASES) files.set(file, [...(files.get(file) ?? []), statement]);
  for (const [file, lines] of files) {
    mkdirSync(dirname(join(scratch, file)), { recursive: true });
    writeFileSync(join(scratch, file), `${lines.join('\n')}\n`);
  }
  const run = spawnSync(process.execPath, [BIOME, 'lint', '--reporter=concise', '--max-diagnostics=none', '.'], {
    cwd: scratch,
    encoding: 'utf8',
  });
  flagged = new Map();
  for (const line of `${run.stdout}\n${run.stderr}`.split('\n')) {
    const match = RULE_LINE.exec(line.trim());
    if (match) flagged.set(`${match[1]}:${match[2]}`, `${match[3]}: ${match[4]}`);
  }
  if (flagged.size === 0) throw new Error(`biome reported no layering diagnostic:\n${run.stdout}\n${run.stderr}`);
}, 60_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** file:line of each case, numbered as the planted file has it. */
const located = (): (readonly [string, Case])[] => {
  const next = new Map<string, number>();
  return CASES.map((c) => {
    const line = (next.get(c[0]) ?? 0) + 1;
    next.set(c[0], line);
    return [`${c[0]}:${line}`, c] as const;
  });
};

describe('layering lint (biome.json overrides)', () => {
  it('flags exactly the planted imports and globals that break a layer, and nothing a layer may use', () => {
    const expected = located()
      .filter(([, c]) => c[2] !== undefined)
      .map(([at, c]) => `${at} ${c[1]}`);
    const actual = located()
      .filter(([at]) => flagged.has(at))
      .map(([at, c]) => `${at} ${c[1]}`);

    expect(actual).toEqual(expected);
    expect([...flagged.keys()].filter((at) => !located().some(([l]) => l === at))).toEqual([]);
  });

  it.each(located().filter(([, c]) => c[2] !== undefined))('%s says why', (at, c) => {
    expect(flagged.get(at)).toContain(c[2]);
  });
});

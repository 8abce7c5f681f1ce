/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof` or `bench:engine --cpu-prof FILE`): the top files and
 * functions by self time, and the top files by inclusive time (a sample counts once for every file on its stack).
 * A package under node_modules counts as one file, so dynalite or the SDK shows as one line.
 *
 *   node --import tsx bench/cpuprofile-summary.ts FILE [--top N] [--match TEXT]
 *
 * `--match TEXT` adds the callers of the functions whose name or file contains TEXT, by inclusive time.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, match: { type: 'string' } },
});
const file = positionals[0];
if (file === undefined) throw new Error('usage: cpuprofile-summary.ts FILE [--top N] [--match TEXT]');
const top = Number(values.top);
const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;

/** node_modules/<pkg>/... → the package; a project file → its path from the project; V8's own → its name. */
function fileOf(frame: CallFrame): string {
  const url = frame.url;
  if (url === '') return `(${frame.functionName || 'native'})`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return `npm:${rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (url.startsWith('node:')) return url;
  const marks = ['/shared/', '/infra/', '/functions/', '/bench/', '/test/'];
  for (const mark of marks) {
    const at = url.lastIndexOf(mark);
    if (at >= 0) return url.slice(at + 1);
  }
  return url;
}
const fnOf = (frame: CallFrame) => `${frame.functionName || '(anonymous)'} ${fileOf(frame)}:${frame.lineNumber + 1}`;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const selfFile = new Map<string, number>();
const selfFn = new Map<string, number>();
const inclFile = new Map<string, number>();
const callers = new Map<string, number>();
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
let total = 0;
profile.samples.forEach((id, i) => {
  const ms = (profile.timeDeltas[i] ?? 0) / 1000;
  total += ms;
  const leaf = byId.get(id);
  if (!leaf) return;
  add(selfFile, fileOf(leaf.callFrame), ms);
  add(selfFn, fnOf(leaf.callFrame), ms);
  const seen = new Set<string>();
  const seenCallers = new Set<string>();
  let matched = false;
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const node = byId.get(at);
    if (!node) break;
    const f = fileOf(node.callFrame);
    if (!seen.has(f)) {
      seen.add(f);
      add(inclFile, f, ms);
    }
    // Walking from the leaf up: once a frame matched, the frames above it are its callers.
    const name = fnOf(node.callFrame);
    if (matched && !seenCallers.has(name) && !f.startsWith('npm:')) {
      seenCallers.add(name);
      add(callers, name, ms);
    }
    if (values.match !== undefined && name.includes(values.match)) matched = true;
  }
});

const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${v.toFixed(0).padStart(8)} ms ${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`);
};
console.log(`${file}: ${total.toFixed(0)} ms sampled`);
print('self time by file', selfFile);
print('self time by function', selfFn);
print('inclusive time by file', inclFile);
if (values.match !== undefined) print(`project callers of "${values.match}" (inclusive)`, callers);

/**
 * ELK (elkjs, the Eclipse Layout Kernel's layered algorithm) in a Web Worker: the page loads elkjs's small API file
 * and hands the worker URL to it, so a layout never blocks the page. Layouts are cached by structure. Unfolding or
 * folding one box lays out only that box's contents (incremental.js) and keeps the rest in place.
 */
import { getConfig } from '../auth.js';
import { CLUSTER_PADDING, innerGraph, keyInnerEdges, resize } from './incremental.js';
import { elkGraph, readLayout, structureKey } from './model.js';

let elk;
const cache = new Map();
const CACHE_SIZE = 32;

async function instance() {
  if (elk) return elk;
  const { elk: files } = getConfig();
  await import(new URL(files.api, document.baseURI).href);
  elk = new window.ELK({ workerUrl: new URL(files.worker, document.baseURI).href });
  return elk;
}

function keep(key, laidOut) {
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value);
  cache.set(key, laidOut);
  return laidOut;
}

export async function layout(graph) {
  const key = structureKey(graph);
  const cached = cache.get(key);
  if (cached) return cached;
  return keep(key, readLayout(await (await instance()).layout(elkGraph(graph))));
}

const PADDING = `[top=${CLUSTER_PADDING.top},left=${CLUSTER_PADDING.left},bottom=${CLUSTER_PADDING.bottom},right=${CLUSTER_PADDING.right}]`;

/**
 * The layout of `next`, where only `groupId` changed (unfolded or folded) since `prev` (`prevGraph`'s layout): its
 * contents are laid out alone and the rest shifts (incremental.js). A whole layout when the shift does not fit.
 * Answers `{ laidOut, incremental }`.
 */
export async function relayout(prev, prevGraph, next, groupId) {
  const key = structureKey(next);
  const cached = cache.get(key);
  if (cached) return { laidOut: cached, incremental: true };
  const unfolded = next.nodes.find((n) => n.id === groupId)?.kind === 'group';
  let inner;
  if (unfolded) {
    const part = innerGraph(next, groupId);
    inner = keyInnerEdges(readLayout(await (await instance()).layout(elkGraph(part, PADDING))), part);
  }
  const shifted = resize(prev, prevGraph, next, groupId, inner);
  if (shifted) return { laidOut: keep(key, shifted), incremental: true };
  return { laidOut: await layout(next), incremental: false };
}

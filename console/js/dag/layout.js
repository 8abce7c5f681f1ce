/**
 * ELK (elkjs, the Eclipse Layout Kernel's layered algorithm) in a Web Worker: the page loads elkjs's small API file
 * and hands the worker URL to it, so a layout never blocks the page. Layouts are cached by structure.
 */
import { getConfig } from '../auth.js';
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

export async function layout(graph) {
  const key = structureKey(graph);
  const cached = cache.get(key);
  if (cached) return cached;
  const laidOut = readLayout(await (await instance()).layout(elkGraph(graph)));
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value);
  cache.set(key, laidOut);
  return laidOut;
}

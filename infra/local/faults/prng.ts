/**
 * Seeded randomness for fault injection: mulberry32 (a small, fast 32-bit generator, good enough to pick which calls
 * fail), one stream per fault point, so the same seed and spec make the same decisions in the same call order at each
 * point, whatever the other points do in between.
 */

/** mulberry32: a generator of uniform numbers in [0, 1) from a 32-bit seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A 32-bit FNV-1a of a label: mixes a point's name into the seed of its own stream. */
function labelHash(label: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) hash = Math.imul(hash ^ label.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** Independent streams by label (a fault point), all from one seed. */
export interface SeededStreams {
  readonly seed: number;
  /** The stream of `label`: the same seed and label give the same numbers. */
  stream(label: string): () => number;
}

export function seededStreams(seed: number): SeededStreams {
  const streams = new Map<string, () => number>();
  return {
    seed,
    stream(label) {
      let next = streams.get(label);
      if (!next) {
        next = mulberry32((seed ^ labelHash(label)) >>> 0);
        streams.set(label, next);
      }
      return next;
    },
  };
}

/** A seed for a run that was given none: printed, so the run can be repeated with it. */
export const randomSeed = (): number => Math.floor(Math.random() * 2 ** 32);

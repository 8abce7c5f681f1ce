/**
 * dynalite keeps an in-memory table in memory-level, its values as JSON and, by memory-level's default, stored as
 * bytes: every write turned an item's JSON text into a Buffer and every read turned it back into text, keys as well
 * (about 5 % of a zero-work step's CPU on the embedded stack). memory-level can store the text itself (its `utf8`
 * store encoding); keys then compare as strings, in UTF-16 code units instead of UTF-8 bytes. The two orders differ
 * only between characters at or above U+E000 and those beyond U+FFFF, and dynalite's item and index keys are ASCII
 * (its table and index names, and the key values written as hex), so every query and scan reads items in the same
 * order as before. Tables on disk (LevelDB) are not concerned.
 */
import { createRequire } from 'node:module';

type MemoryLevelClass = new (options?: object) => object;

let decided = false;
let textStorage = false;

/**
 * Makes the dynalite of this process keep its in-memory tables as text. dynalite's db module takes memory-level's
 * class once, when it is loaded: this must run before anything loads dynalite, and does nothing after that (the
 * tables are then kept as bytes, which changes nothing but their cost). The answer says whether it took effect.
 */
export function storeDynaliteTablesAsText(): boolean {
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const dbModule = fromDynalite.resolve('./db');
  if (decided || fromDynalite.cache[dbModule] !== undefined) {
    decided = true;
    return textStorage;
  }
  decided = true;
  const memoryLevel = fromDynalite('memory-level') as { MemoryLevel: MemoryLevelClass };
  const Original = memoryLevel.MemoryLevel;
  class TextMemoryLevel extends Original {
    constructor(options?: object) {
      super({ storeEncoding: 'utf8', ...options });
    }
  }
  // Only dynalite's db module sees the subclass: it takes the class while it loads, and the export is put back.
  memoryLevel.MemoryLevel = TextMemoryLevel;
  try {
    fromDynalite('./db');
  } finally {
    memoryLevel.MemoryLevel = Original;
  }
  textStorage = true;
  return textStorage;
}

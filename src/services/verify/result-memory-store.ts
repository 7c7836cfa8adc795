/**
 * The result cache's store in this process's memory (without Redis), bounded both in answers and
 * in bytes, the least recently used dropped first.
 *
 * An entry is held as one packed string, not as the result's object graph: a result is a dozen
 * small objects (1.3 KB of heap for a short address, 1.7 KB for 254 characters, measured), and
 * its JSON repeats some 45 key names. Packed, each object is an array of its values after the
 * index of its key list (its shape, kept once per store): 0.5 KB and 1 KB of heap, and a size in
 * bytes known when the entry is stored, which is what the byte bound counts (docs/benchmarks.md,
 * "Where a live cycle's memory went"). */
import { LRUCache } from 'lru-cache';
import type { ResultStore, StoredResult } from './result-cache.js';

/** Heap per entry besides the characters of its text and key: string headers, the LRU's slots (measured). */
const ENTRY_OVERHEAD_BYTES = 140;
/** Key lists learnt at most; an entry with a new one beyond them is kept as plain JSON. */
const MAX_SHAPES = 1024;
/** Marks a packed array (an object's marker is its shape's index, from 0). */
const ARRAY = -1;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Objects as `[shape, ...values]`, arrays as `[-1, ...items]`; the shapes are the key lists. */
class Packer {
  readonly #shapes: string[][] = [];
  readonly #index = new Map<string, number>();

  /** The entry's text: packed (starts with `[`), or plain JSON (`{`) when a shape could not be learnt. */
  pack(entry: StoredResult): string {
    const packed = this.#pack(entry as unknown as Json);
    return packed === undefined ? JSON.stringify(entry) : JSON.stringify(packed);
  }

  unpack(text: string): StoredResult {
    const value = JSON.parse(text) as Json;
    return (Array.isArray(value) ? this.#unpack(value) : value) as unknown as StoredResult;
  }

  /** undefined: a shape could not be learnt (too many, or a `__proto__` key). */
  #pack(value: Json): Json | undefined {
    if (value === null || typeof value !== 'object') return value;
    const out: Json[] = [];
    if (Array.isArray(value)) {
      out.push(ARRAY);
      for (const item of value) {
        const packed = this.#pack(item ?? null);
        if (packed === undefined) return undefined;
        out.push(packed);
      }
      return out;
    }
    // As JSON.stringify does: a key whose value is undefined is left out.
    const keys = Object.keys(value).filter((k) => value[k] !== undefined);
    const shape = this.#shapeOf(keys);
    if (shape === undefined) return undefined;
    out.push(shape);
    for (const key of keys) {
      const packed = this.#pack(value[key]!);
      if (packed === undefined) return undefined;
      out.push(packed);
    }
    return out;
  }

  #shapeOf(keys: string[]): number | undefined {
    const id = keys.join('\0');
    const known = this.#index.get(id);
    if (known !== undefined) return known;
    if (this.#shapes.length >= MAX_SHAPES || keys.includes('__proto__')) return undefined;
    this.#shapes.push(keys);
    this.#index.set(id, this.#shapes.length - 1);
    return this.#shapes.length - 1;
  }

  #unpack(value: Json): Json {
    if (!Array.isArray(value)) return value;
    const [marker, ...rest] = value as [number, ...Json[]];
    if (marker === ARRAY) return rest.map((item) => this.#unpack(item));
    const object: Record<string, Json> = {};
    this.#shapes[marker]!.forEach((key, i) => (object[key] = this.#unpack(rest[i]!)));
    return object;
  }
}

/** Bytes of heap an entry is counted for: its text (two bytes a character beyond Latin-1) and the overhead. */
export function entryBytes(key: string, text: string): number {
  // eslint-disable-next-line no-control-regex
  const width = /[^\u0000-\u00ff]/.test(text) ? 2 : 1;
  return text.length * width + key.length + ENTRY_OVERHEAD_BYTES;
}

/**
 * At most `maxEntries` answers and `maxBytes` bytes of them (entryBytes); the least recently used
 * go first. An entry larger than the whole byte bound is not kept.
 */
export function createMemoryResultStore(maxEntries: number, maxBytes = Number.MAX_SAFE_INTEGER): ResultStore {
  const packer = new Packer();
  const entries = new LRUCache<string, string>({
    max: Math.max(1, maxEntries),
    maxSize: Math.max(1, maxBytes),
    sizeCalculation: (text, key) => entryBytes(key, text),
  });
  return {
    getMany: (keys) =>
      Promise.resolve(
        keys.map((key) => {
          const text = entries.get(key);
          return text === undefined ? undefined : packer.unpack(text);
        }),
      ),
    setMany: (writes) => {
      for (const { key, entry } of writes) {
        if (entry === null) entries.delete(key);
        // An entry larger than the bound is not kept, and set() then removes the older one.
        else entries.set(key, packer.pack(entry));
      }
      return Promise.resolve();
    },
  };
}

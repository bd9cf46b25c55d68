// Node 20 runs no TypeScript: a module under test is bundled by esbuild, as `npm run build` does,
// and imported from memory. Each call is a fresh instance with its own state, as a new page
// view of the storefront would have.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

let instances = 0;

/** The module at `url` (a TypeScript file), its imports bundled in. */
export async function importTs(url) {
  const { outputFiles } = await build({
    entryPoints: [fileURLToPath(url)],
    bundle: true,
    format: 'esm',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  });
  const code = `${outputFiles[0].text}\n// instance ${++instances}`;
  return import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
}

/** An in-memory `Storage`. */
export class MemoryStorage {
  #items = new Map();
  getItem(key) {
    return this.#items.has(key) ? this.#items.get(key) : null;
  }
  setItem(key, value) {
    this.#items.set(key, String(value));
  }
  removeItem(key) {
    this.#items.delete(key);
  }
}

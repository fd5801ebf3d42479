// Build producer.js into a component: node build.mjs <wit-dir> <out.wasm>
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { componentize } from '@bytecodealliance/componentize-js';

const [witPath, out] = process.argv.slice(2);
if (!witPath || !out) {
  console.error('usage: node build.mjs <wit-dir> <out.wasm>');
  process.exit(2);
}
const { component } = await componentize({
  sourcePath: fileURLToPath(new URL('producer.js', import.meta.url)),
  witPath,
  worldName: 'producer',
  // A producer has no network, clock or randomness worth asking for: leave them out so the
  // component imports only what discern's sandbox provides.
  disableFeatures: ['http', 'fetch-event', 'random', 'clocks'],
});
await writeFile(out, component);
console.error(`wrote ${out} (${component.length} bytes)`);

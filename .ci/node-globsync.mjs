// Node 20 lacks `fs.globSync` (Node 22), which the MCP conformance CLI
// imports by name. This `--import` hook serves `fs` through a module that
// re-exports it and adds a small `globSync` for the patterns the CLI uses
// (`**/name` and plain relative paths).
import { register } from 'node:module';

const shim = `
import fs from 'node:fs';
import path from 'node:path';
export * from 'node:fs';
export default fs;
function walk(root, dir, out) {
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? path.join(dir, entry.name) : entry.name;
    if (entry.isDirectory()) walk(root, rel, out); else out.push(rel);
  }
}
export function globSync(pattern, options = {}) {
  if (typeof fs.globSync === 'function') return fs.globSync(pattern, options);
  const root = options.cwd ? String(options.cwd) : process.cwd();
  const files = [];
  if (fs.existsSync(root)) walk(root, '', files);
  if (pattern.startsWith('**/')) {
    const name = pattern.slice(3);
    return files.filter((f) => path.basename(f) === name);
  }
  return files.filter((f) => f === pattern);
}
`;
const shimUrl = 'data:text/javascript,' + encodeURIComponent(shim);

const hooks = `
export async function resolve(specifier, context, next) {
  const fromShim = context.parentURL && context.parentURL.startsWith('data:');
  if (!fromShim && (specifier === 'fs' || specifier === 'node:fs')) {
    return { url: ${JSON.stringify(shimUrl)}, shortCircuit: true };
  }
  return next(specifier, context);
}
`;
const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  register('data:text/javascript,' + encodeURIComponent(hooks));
}

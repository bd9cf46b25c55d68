// Runs the platform's theme checks (theme app extension rules) over extensions/videoapp-theme and
// fails on any error. Offline and repeatable: the checks use the Liquid documentation bundled
// with the installed package, never a downloaded copy.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../extensions/videoapp-theme', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'videoapp-theme-check-'));
// Where the docs manager looks for fresh documentation: an empty directory, so it falls back to
// the package's own data. Its cache directory (XDG_CACHE_HOME) is a fresh one too.
process.env.SHOPIFY_TLD_ROOT = join(scratch, 'none');
process.env.XDG_CACHE_HOME = scratch;

const SEVERITY = ['error', 'warning', 'info'];
let code = 0;
try {
  const { themeCheckRun } = await import('@shopify/theme-check-node');
  const { offenses } = await themeCheckRun(root, undefined, () => {});
  const counts = [0, 0, 0];
  for (const o of offenses.sort((a, b) => a.severity - b.severity)) {
    counts[o.severity] = (counts[o.severity] ?? 0) + 1;
    const file = relative(root, fileURLToPath(o.uri));
    const at = o.start ? `:${o.start.line + 1}:${o.start.character + 1}` : '';
    console.log(`${SEVERITY[o.severity] ?? o.severity} ${o.check} ${file}${at}\n  ${o.message}`);
  }
  console.log(`theme-check: ${counts[0]} error(s), ${counts[1]} warning(s), ${counts[2]} info over ${relative(process.cwd(), root)}`);
  if (counts[0]) code = 1;
} catch (e) {
  console.error('theme-check could not run:', e);
  code = 2;
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(code);

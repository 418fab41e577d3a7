// Writes docs/schemas/<name>.json from the zod definitions of src/schema/json-schemas.ts (built
// into dist/ first: `npm run schemas`). test/cli/json-contract.test.ts fails when they differ.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCHEMAS, jsonSchemaText } from '../dist/schema/json-schemas.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'schemas');
mkdirSync(dir, { recursive: true });
for (const name of Object.keys(SCHEMAS)) {
  writeFileSync(join(dir, `${name}.json`), jsonSchemaText(name));
  console.log(`wrote docs/schemas/${name}.json`);
}

// Writes sql/inbox.sql from the inbox's migrations (through the built package, so run after tsup):
// the schema for teams that run their own migration tool. test/inbox/schema-file.test.ts fails
// when the file and the migrations drift apart.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaSql } from '../dist/inbox.js';
import { root } from './lib.mjs';

writeFileSync(join(root, 'sql/inbox.sql'), schemaSql());
console.log('wrote sql/inbox.sql');

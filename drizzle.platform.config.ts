import { defineConfig } from 'drizzle-kit';

// Platform tables (provider registry, created swaps): schema `platform`, never rebuilt by replay.
// Generate with `npx drizzle-kit generate --config drizzle.platform.config.ts`.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema/platform.ts',
  out: './drizzle/platform',
  casing: 'snake_case',
  schemaFilter: ['platform'],
});

import { defineConfig } from 'drizzle-kit';

// The projected state (rebuilt by replay). Its tables are unqualified: the connection's search_path
// picks the live schema or a replay's fresh one. Generate with `npm run db:generate`.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema/projection.ts',
  out: './drizzle/projection',
  casing: 'snake_case',
});

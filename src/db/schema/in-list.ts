import { sql } from 'drizzle-orm';

/** A check constraint's list of names (`'a', 'b'`): the code's own words, never input. */
export const inList = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));

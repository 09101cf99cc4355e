const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** A Postgres schema (or role, table) name as the sources splice it into SQL: a lower-case identifier. */
export function assertIdentifier(name: string, what = 'schema'): string {
  if (!IDENTIFIER.test(name)) throw new Error(`${what} name "${name}" must be a lower-case SQL identifier`);
  return name;
}

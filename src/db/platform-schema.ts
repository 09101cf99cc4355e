/** The Postgres schema of the platform tables (provider registry, created swaps): never replayed. */
export const PLATFORM_SCHEMA = 'platform';

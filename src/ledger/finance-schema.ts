/** The Postgres schema of the finance views (src/ledger/finance-views.ts), unless an option names another. */
export const FINANCE_SCHEMA = 'finance';

-- The balance check of migration 0004, with the same two rules, made to cost what the statement wrote and
-- not what the ledger holds. The old query joined the statement's lines to the whole ledger_postings table;
-- with no statistics on a transition table the planner chose a scan of the ledger, so every batch's insert
-- grew with the ledger: 7.6 s of 15 s for 100,000 events on the dev machine, against 1.1 s now.
-- 1. Balance: an entry is written whole by one statement (rule 2), so its lines are the statement's lines
--    of that entry: the sums are taken over the transition table alone.
-- 2. Written whole: an entry of this statement must have no line from before it, which one index probe
--    per entry proves (ledger_postings_entry_line_idx): the ledger holds exactly the statement's lines.
CREATE OR REPLACE FUNCTION ledger_postings_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  EXECUTE format(
    'SELECT n.entry_id FROM (SELECT entry_id, count(*) AS lines FROM new_postings GROUP BY entry_id) n '
    ' CROSS JOIN LATERAL (SELECT count(*) AS lines FROM %I.ledger_postings p WHERE p.entry_id = n.entry_id) l '
    'WHERE l.lines > n.lines ORDER BY n.entry_id LIMIT 1', TG_TABLE_SCHEMA)
    INTO bad;
  IF bad.entry_id IS NOT NULL THEN
    RAISE EXCEPTION 'ledger entry % already exists: an entry is written whole by one statement and never extended',
      bad.entry_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  SELECT entry_id, entry_kind, currency, sum(amount) AS total
    INTO bad
    FROM new_postings
   GROUP BY entry_id, entry_kind, currency
  HAVING sum(amount) <> 0
   ORDER BY entry_id, entry_kind, currency
   LIMIT 1;
  IF bad.entry_id IS NOT NULL THEN
    RAISE EXCEPTION 'ledger entry % (%) does not balance in %: its lines sum to %',
      bad.entry_id, bad.entry_kind, bad.currency, bad.total
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END;
$$;

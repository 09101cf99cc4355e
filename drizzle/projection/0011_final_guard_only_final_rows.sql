-- The final-status guard is called only for a row that is final before the statement: for any other row
-- its function returned NEW at once, yet PL/pgSQL was entered once per updated swap, on the projector's hot
-- path (a batch upserts every swap its events touched). The WHEN clause is evaluated without entering the
-- function; the function and its rules are unchanged.
DROP TRIGGER "swaps_guard_final" ON "swaps";--> statement-breakpoint
CREATE TRIGGER "swaps_guard_final"
  BEFORE UPDATE OR DELETE ON "swaps"
  FOR EACH ROW WHEN (OLD.final) EXECUTE FUNCTION swaps_guard_final();

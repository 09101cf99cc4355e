-- Final-status rules enforced by the database, not only by the fold: once a swap is final, its status,
-- finality and every value already known (final amount, fees, transaction hashes) stay as they are.
-- Filling a value still unknown is allowed (the confirming poll after a webhook brings fees and hashes).
-- The one exception: an update that names, in last_correction_event_id, an applied SwapCorrected of
-- this swap in the journal of the same schema (an operator's audited amendment).
CREATE FUNCTION swaps_guard_final() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  corrected boolean := false;
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.final THEN
      RAISE EXCEPTION 'swap % is final (%) and cannot be deleted', OLD.swap_id, OLD.status
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN OLD;
  END IF;
  IF NOT OLD.final THEN
    RETURN NEW;
  END IF;
  IF NEW.status IS DISTINCT FROM OLD.status
     OR NEW.final IS DISTINCT FROM OLD.final
     OR NEW.final_at IS DISTINCT FROM OLD.final_at
     OR (OLD.amount_to IS NOT NULL AND NEW.amount_to IS DISTINCT FROM OLD.amount_to)
     OR (OLD.provider_fees IS NOT NULL AND NEW.provider_fees IS DISTINCT FROM OLD.provider_fees)
     OR (OLD.referral_fees IS NOT NULL AND NEW.referral_fees IS DISTINCT FROM OLD.referral_fees)
     OR (OLD.payout_network_fees IS NOT NULL AND NEW.payout_network_fees IS DISTINCT FROM OLD.payout_network_fees)
     OR (OLD.payin_transaction_id IS NOT NULL AND NEW.payin_transaction_id IS DISTINCT FROM OLD.payin_transaction_id)
     OR (OLD.payout_transaction_id IS NOT NULL AND NEW.payout_transaction_id IS DISTINCT FROM OLD.payout_transaction_id)
  THEN
    IF NEW.last_correction_event_id IS NOT NULL
       AND NEW.last_correction_event_id IS DISTINCT FROM OLD.last_correction_event_id THEN
      EXECUTE format(
        'SELECT EXISTS (SELECT 1 FROM %I.event_journal WHERE event_id = $1 AND swap_id = $2 '
        'AND event_type = ''SwapCorrected'' AND outcome = ''applied'')', TG_TABLE_SCHEMA)
        INTO corrected USING NEW.last_correction_event_id, NEW.swap_id;
    END IF;
    IF NOT corrected THEN
      RAISE EXCEPTION 'swap % is final (%): its status and final amounts change only through an applied SwapCorrected',
        OLD.swap_id, OLD.status
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER swaps_guard_final
  BEFORE UPDATE OR DELETE ON swaps
  FOR EACH ROW EXECUTE FUNCTION swaps_guard_final();

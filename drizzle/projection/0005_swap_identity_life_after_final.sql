CREATE TABLE "reconciliation_history" (
	"event_id" uuid PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"swap_id" text NOT NULL,
	"based_on_event_id" uuid NOT NULL,
	"verdict" text NOT NULL,
	"checks" jsonb NOT NULL,
	"reconciled_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "status_conflicts" (
	"conflict_id" text PRIMARY KEY NOT NULL,
	"event_id" uuid NOT NULL,
	"provider_id" text NOT NULL,
	"swap_id" text NOT NULL,
	"field" text NOT NULL,
	"final_value" text,
	"reported_value" text,
	"source" text NOT NULL,
	"occurred_at" timestamp(3) with time zone NOT NULL,
	"recorded_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "event_journal" DROP CONSTRAINT "event_journal_outcome_chk";--> statement-breakpoint
DROP INDEX "event_journal_swap_idx";--> statement-breakpoint
DROP INDEX "ledger_postings_swap_idx";--> statement-breakpoint
-- Swap identity becomes (provider_id, swap_id): a swapId is unique per partner only. Existing rows keep
-- their values; the queue and verdict rows learn their provider from the swap they belong to.
ALTER TABLE "reconciliation_queue" ADD COLUMN "provider_id" text;--> statement-breakpoint
UPDATE "reconciliation_queue" q SET "provider_id" = s."provider_id" FROM "swaps" s WHERE s."swap_id" = q."swap_id";--> statement-breakpoint
ALTER TABLE "reconciliation_queue" ALTER COLUMN "provider_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "reconciliations" ADD COLUMN "provider_id" text;--> statement-breakpoint
UPDATE "reconciliations" r SET "provider_id" = s."provider_id" FROM "swaps" s WHERE s."swap_id" = r."swap_id";--> statement-breakpoint
ALTER TABLE "reconciliations" ALTER COLUMN "provider_id" SET NOT NULL;--> statement-breakpoint
INSERT INTO "reconciliation_history" SELECT "event_id", "provider_id", "swap_id", "based_on_event_id", "verdict", "checks", "reconciled_at" FROM "reconciliations";--> statement-breakpoint
ALTER TABLE "reconciliation_queue" DROP CONSTRAINT "reconciliation_queue_pkey";--> statement-breakpoint
ALTER TABLE "reconciliations" DROP CONSTRAINT "reconciliations_pkey";--> statement-breakpoint
ALTER TABLE "swaps" DROP CONSTRAINT "swaps_pkey";--> statement-breakpoint
ALTER TABLE "reconciliation_queue" ADD CONSTRAINT "reconciliation_queue_pkey" PRIMARY KEY("provider_id","swap_id");--> statement-breakpoint
ALTER TABLE "reconciliations" ADD CONSTRAINT "reconciliations_pkey" PRIMARY KEY("provider_id","swap_id");--> statement-breakpoint
ALTER TABLE "swaps" ADD CONSTRAINT "swaps_pkey" PRIMARY KEY("provider_id","swap_id");--> statement-breakpoint
ALTER TABLE "swaps" ADD COLUMN "status_class" text DEFAULT 'open' NOT NULL;--> statement-breakpoint
ALTER TABLE "swaps" ADD COLUMN "closed_at" timestamp(3) with time zone;--> statement-breakpoint
ALTER TABLE "swaps" ADD COLUMN "refund_transaction_id" text;--> statement-breakpoint
-- Rows folded before classes existed: final ones were final (EXPIRED included: so their events said).
UPDATE "swaps" SET "status_class" = 'final' WHERE "final";--> statement-breakpoint
CREATE INDEX "reconciliation_history_swap_idx" ON "reconciliation_history" USING btree ("provider_id","swap_id","reconciled_at");--> statement-breakpoint
CREATE INDEX "status_conflicts_swap_idx" ON "status_conflicts" USING btree ("provider_id","swap_id");--> statement-breakpoint
CREATE INDEX "event_journal_swap_idx" ON "event_journal" USING btree ("provider_id","swap_id","topic","partition","offset");--> statement-breakpoint
CREATE INDEX "ledger_postings_swap_idx" ON "ledger_postings" USING btree ("provider_id","swap_id","swap_version");--> statement-breakpoint
ALTER TABLE "event_journal" ADD CONSTRAINT "event_journal_outcome_chk" CHECK ("event_journal"."outcome" in ('applied', 'rejected', 'noop', 'parked', 'contradicted'));--> statement-breakpoint
ALTER TABLE "swaps" ADD CONSTRAINT "swaps_status_class_chk" CHECK ("swaps"."status_class" in ('open', 'closed', 'final'));--> statement-breakpoint
ALTER TABLE "swaps" ADD CONSTRAINT "swaps_final_class_chk" CHECK (("swaps"."final") = ("swaps"."status_class" = 'final'));--> statement-breakpoint
-- The final-status guard, now keyed by (provider_id, swap_id) and covering the new figures: a final swap's
-- status, class, finality and known figures change only through an applied SwapCorrected of that swap.
CREATE OR REPLACE FUNCTION swaps_guard_final() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  corrected boolean := false;
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.final THEN
      RAISE EXCEPTION 'swap %/% is final (%) and cannot be deleted', OLD.provider_id, OLD.swap_id, OLD.status
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN OLD;
  END IF;
  IF NOT OLD.final THEN
    RETURN NEW;
  END IF;
  IF NEW.status IS DISTINCT FROM OLD.status
     OR NEW.final IS DISTINCT FROM OLD.final
     OR NEW.status_class IS DISTINCT FROM OLD.status_class
     OR NEW.final_at IS DISTINCT FROM OLD.final_at
     OR (OLD.amount_to IS NOT NULL AND NEW.amount_to IS DISTINCT FROM OLD.amount_to)
     OR (OLD.provider_fees IS NOT NULL AND NEW.provider_fees IS DISTINCT FROM OLD.provider_fees)
     OR (OLD.referral_fees IS NOT NULL AND NEW.referral_fees IS DISTINCT FROM OLD.referral_fees)
     OR (OLD.payout_network_fees IS NOT NULL AND NEW.payout_network_fees IS DISTINCT FROM OLD.payout_network_fees)
     OR (OLD.payin_transaction_id IS NOT NULL AND NEW.payin_transaction_id IS DISTINCT FROM OLD.payin_transaction_id)
     OR (OLD.payout_transaction_id IS NOT NULL AND NEW.payout_transaction_id IS DISTINCT FROM OLD.payout_transaction_id)
     OR (OLD.refund_transaction_id IS NOT NULL AND NEW.refund_transaction_id IS DISTINCT FROM OLD.refund_transaction_id)
  THEN
    IF NEW.last_correction_event_id IS NOT NULL
       AND NEW.last_correction_event_id IS DISTINCT FROM OLD.last_correction_event_id THEN
      EXECUTE format(
        'SELECT EXISTS (SELECT 1 FROM %I.event_journal WHERE event_id = $1 AND provider_id = $2 AND swap_id = $3 '
        'AND event_type = ''SwapCorrected'' AND outcome = ''applied'')', TG_TABLE_SCHEMA)
        INTO corrected USING NEW.last_correction_event_id, NEW.provider_id, NEW.swap_id;
    END IF;
    IF NOT corrected THEN
      RAISE EXCEPTION 'swap %/% is final (%): its status and final amounts change only through an applied SwapCorrected',
        OLD.provider_id, OLD.swap_id, OLD.status
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  END IF;
  RETURN NEW;
END;
$$;

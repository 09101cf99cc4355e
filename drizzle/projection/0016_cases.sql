CREATE TABLE "cases" (
	"provider_id" text NOT NULL,
	"swap_id" text NOT NULL,
	"state" text NOT NULL,
	"outcome" text,
	"trigger" text NOT NULL,
	"trigger_event_id" uuid NOT NULL,
	"opened_at" timestamp(3) with time zone NOT NULL,
	"openings" integer NOT NULL,
	"resolved_at" timestamp(3) with time zone,
	"amount_at_stake" numeric,
	"stake_currency" text,
	"failing" text NOT NULL,
	"pending_write_off" jsonb,
	"resolution" jsonb,
	"history" jsonb NOT NULL,
	"last_event_id" uuid NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "cases_pkey" PRIMARY KEY("provider_id","swap_id"),
	CONSTRAINT "cases_state_chk" CHECK ("cases"."state" in ('open', 'acknowledged', 'disputed', 'resolved')),
	CONSTRAINT "cases_outcome_chk" CHECK (("cases"."state" = 'resolved') = ("cases"."outcome" is not null) and ("cases"."outcome" is null or "cases"."outcome" in ('settled_by_evidence', 'partner_paid', 'corrected', 'accepted_loss', 'false_alarm')))
);
--> statement-breakpoint
ALTER TABLE "ledger_postings" DROP CONSTRAINT "ledger_postings_account_chk";--> statement-breakpoint
ALTER TABLE "ledger_postings" DROP CONSTRAINT "ledger_postings_entry_kind_chk";--> statement-breakpoint
CREATE INDEX "cases_state_idx" ON "cases" USING btree ("state","opened_at");--> statement-breakpoint
ALTER TABLE "ledger_postings" ADD CONSTRAINT "ledger_postings_account_chk" CHECK ("ledger_postings"."account" in ('user_payin', 'user_payout', 'referral_fees_receivable', 'partner_fees', 'payout_network_fees', 'partner_clearing', 'write_offs'));--> statement-breakpoint
ALTER TABLE "ledger_postings" ADD CONSTRAINT "ledger_postings_entry_kind_chk" CHECK ("ledger_postings"."entry_kind" in ('final', 'completion', 'reversal', 'correction', 'write_off'));
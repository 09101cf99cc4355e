CREATE TABLE "ledger_postings" (
	"posting_id" text PRIMARY KEY NOT NULL,
	"entry_id" uuid NOT NULL,
	"line" integer NOT NULL,
	"entry_kind" text NOT NULL,
	"swap_id" text NOT NULL,
	"swap_version" integer NOT NULL,
	"provider_id" text NOT NULL,
	"account" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric NOT NULL,
	"effective_at" timestamp(3) with time zone NOT NULL,
	"recorded_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "ledger_postings_account_chk" CHECK ("ledger_postings"."account" in ('user_payin', 'user_payout', 'referral_fees_receivable', 'partner_fees', 'payout_network_fees', 'partner_clearing')),
	CONSTRAINT "ledger_postings_entry_kind_chk" CHECK ("ledger_postings"."entry_kind" in ('final', 'completion', 'reversal', 'correction')),
	CONSTRAINT "ledger_postings_amount_chk" CHECK ("ledger_postings"."amount" <> 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_postings_entry_line_idx" ON "ledger_postings" USING btree ("entry_id","line");--> statement-breakpoint
CREATE INDEX "ledger_postings_swap_idx" ON "ledger_postings" USING btree ("swap_id","swap_version");--> statement-breakpoint
CREATE INDEX "ledger_postings_effective_idx" ON "ledger_postings" USING btree ("effective_at");
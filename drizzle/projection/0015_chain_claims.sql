CREATE TABLE "chain_claims" (
	"chain" text NOT NULL,
	"txid" text NOT NULL,
	"transfer" text NOT NULL,
	"provider_id" text NOT NULL,
	"swap_id" text NOT NULL,
	"role" text NOT NULL,
	"event_id" uuid NOT NULL,
	"asset" text NOT NULL,
	"recipient" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	CONSTRAINT "chain_claims_pkey" PRIMARY KEY("chain","txid","transfer","provider_id","swap_id","role"),
	CONSTRAINT "chain_claims_role_chk" CHECK ("chain_claims"."role" in ('payin', 'payout', 'refund'))
);
--> statement-breakpoint
ALTER TABLE "chain_observations" DROP CONSTRAINT "chain_observations_status_chk";--> statement-breakpoint
ALTER TABLE "chain_observations" ADD COLUMN "block_time" timestamp(3) with time zone;--> statement-breakpoint
ALTER TABLE "chain_observations" ADD COLUMN "fee" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "chain_observations" ADD COLUMN "contract_call" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "chain_claims_swap_idx" ON "chain_claims" USING btree ("provider_id","swap_id");--> statement-breakpoint
ALTER TABLE "chain_observations" ADD CONSTRAINT "chain_observations_status_chk" CHECK ("chain_observations"."status" in ('found', 'pending', 'not_found', 'reverted', 'refused'));
ALTER TABLE "swaps" ALTER COLUMN "created_provider_fees" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "swaps" ALTER COLUMN "created_referral_fees" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "swaps" ALTER COLUMN "created_payout_network_fees" DROP NOT NULL;
ALTER TABLE "reconciliations" ADD COLUMN "based_on_offset" bigint;--> statement-breakpoint
ALTER TABLE "swaps" ADD COLUMN "extra_fees" numeric;
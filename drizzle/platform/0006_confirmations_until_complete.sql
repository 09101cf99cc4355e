ALTER TABLE "platform"."poll_confirmations" ADD COLUMN "state" text DEFAULT 'confirming' NOT NULL;--> statement-breakpoint
ALTER TABLE "platform"."poll_confirmations" ADD COLUMN "attempts" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "platform"."poll_confirmations" ADD COLUMN "next_due_at" timestamp(3) with time zone;--> statement-breakpoint
ALTER TABLE "platform"."poll_confirmations" ADD COLUMN "missing" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "platform"."poll_confirmations" ADD COLUMN "last_attempt_at" timestamp(3) with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "platform"."poll_confirmations" ADD COLUMN "ended_at" timestamp(3) with time zone;--> statement-breakpoint
CREATE INDEX "poll_confirmations_due_idx" ON "platform"."poll_confirmations" USING btree ("next_due_at") WHERE "platform"."poll_confirmations"."state" = 'confirming';--> statement-breakpoint
ALTER TABLE "platform"."poll_confirmations" ADD CONSTRAINT "poll_confirmations_state_chk" CHECK ("platform"."poll_confirmations"."state" in ('confirming', 'confirmed', 'abandoned'));--> statement-breakpoint
ALTER TABLE "platform"."poll_confirmations" ADD CONSTRAINT "poll_confirmations_ended_chk" CHECK (("platform"."poll_confirmations"."state" = 'confirming') = ("platform"."poll_confirmations"."ended_at" is null));--> statement-breakpoint
CREATE VIEW "platform"."confirmations_never_reported" AS (select "provider_id", "swap_id", "missing", "attempts", "outcome" as "last_outcome", "detail", "confirmed_at" as "first_confirmed_at", "last_attempt_at", "ended_at" as "abandoned_at" from "platform"."poll_confirmations" where "platform"."poll_confirmations"."state" = 'abandoned' and cardinality("platform"."poll_confirmations"."missing") > 0);
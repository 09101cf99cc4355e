ALTER TABLE "platform"."providers" ADD COLUMN "default_slippage" numeric;--> statement-breakpoint
ALTER TABLE "platform"."providers" ADD COLUMN "webhook_network_fees" text DEFAULT 'extra' NOT NULL;--> statement-breakpoint
ALTER TABLE "platform"."providers" ADD CONSTRAINT "providers_default_slippage_chk" CHECK ("platform"."providers"."default_slippage" between 0 and 1);--> statement-breakpoint
ALTER TABLE "platform"."providers" ADD CONSTRAINT "providers_webhook_network_fees_chk" CHECK ("platform"."providers"."webhook_network_fees" in ('extra', 'referral'));
CREATE TABLE "platform"."catalog_changes" (
	"change_id" bigserial PRIMARY KEY NOT NULL,
	"sync_id" bigint NOT NULL,
	"provider_id" text NOT NULL,
	"item_kind" text NOT NULL,
	"item" text NOT NULL,
	"change" text NOT NULL,
	"old_value" text,
	"new_value" text,
	"changed_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "catalog_changes_kind_chk" CHECK ("platform"."catalog_changes"."item_kind" in ('currency', 'pair'))
);
--> statement-breakpoint
CREATE TABLE "platform"."catalog_currencies" (
	"provider_id" text NOT NULL,
	"currency_id" text NOT NULL,
	"type" text NOT NULL,
	"blockchain" text,
	"chain_id" integer,
	"contract" text,
	"enabled" boolean NOT NULL,
	"first_seen_at" timestamp(3) with time zone NOT NULL,
	"last_seen_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "catalog_currencies_provider_id_currency_id_pk" PRIMARY KEY("provider_id","currency_id")
);
--> statement-breakpoint
CREATE TABLE "platform"."catalog_pairs" (
	"provider_id" text NOT NULL,
	"currency_from" text NOT NULL,
	"currency_to" text NOT NULL,
	"trade_methods" text[] NOT NULL,
	"min_amount" numeric NOT NULL,
	"max_amount" numeric NOT NULL,
	"enabled" boolean NOT NULL,
	"first_seen_at" timestamp(3) with time zone NOT NULL,
	"last_seen_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "catalog_pairs_provider_id_currency_from_currency_to_pk" PRIMARY KEY("provider_id","currency_from","currency_to")
);
--> statement-breakpoint
CREATE TABLE "platform"."catalog_syncs" (
	"sync_id" bigserial PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"started_at" timestamp(3) with time zone NOT NULL,
	"finished_at" timestamp(3) with time zone NOT NULL,
	"outcome" text NOT NULL,
	"currencies" integer,
	"pairs" integer,
	"changes" integer,
	"error" text,
	CONSTRAINT "catalog_syncs_outcome_chk" CHECK ("platform"."catalog_syncs"."outcome" in ('ok', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "platform"."gateway_quotes" (
	"quote_ref" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"quote_id" text,
	"trade_method" text NOT NULL,
	"currency_from" text NOT NULL,
	"currency_to" text NOT NULL,
	"amount_from" numeric,
	"amount_to" numeric NOT NULL,
	"expiry" timestamp(3) with time zone,
	"min_slippage" numeric,
	"max_slippage" numeric,
	"terms" jsonb NOT NULL,
	"response" jsonb NOT NULL,
	"created_at" timestamp(3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "gateway_quotes_trade_method_chk" CHECK ("platform"."gateway_quotes"."trade_method" in ('fixed', 'float'))
);
--> statement-breakpoint
CREATE TABLE "platform"."idempotency_keys" (
	"idempotency_key" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"fingerprint" text NOT NULL,
	"request_id" text NOT NULL,
	"state" text NOT NULL,
	"response_status" integer,
	"response" jsonb,
	"created_at" timestamp(3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp(3) with time zone,
	CONSTRAINT "idempotency_keys_state_chk" CHECK ("platform"."idempotency_keys"."state" in ('in_progress', 'completed')),
	CONSTRAINT "idempotency_keys_completed_chk" CHECK (("platform"."idempotency_keys"."state" = 'completed') = ("platform"."idempotency_keys"."response_status" is not null and "platform"."idempotency_keys"."completed_at" is not null)),
	CONSTRAINT "idempotency_keys_fingerprint_chk" CHECK ("platform"."idempotency_keys"."fingerprint" ~ '^[0-9a-f]{64}$')
);
--> statement-breakpoint
CREATE TABLE "platform"."outbox" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"aggregate_key" text NOT NULL,
	"event_id" uuid NOT NULL,
	"event_type" text NOT NULL,
	"provider_id" text NOT NULL,
	"event" jsonb NOT NULL,
	"reason" text NOT NULL,
	"created_at" timestamp(3) with time zone DEFAULT now() NOT NULL,
	"published_at" timestamp(3) with time zone,
	CONSTRAINT "outbox_event_id_key" UNIQUE("event_id")
);
--> statement-breakpoint
CREATE TABLE "platform"."poll_confirmations" (
	"swap_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"outcome" text NOT NULL,
	"detail" text,
	"event_id" uuid,
	"confirmed_at" timestamp(3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "poll_confirmations_swap_id_provider_id_pk" PRIMARY KEY("swap_id","provider_id")
);
--> statement-breakpoint
ALTER TABLE "platform"."catalog_currencies" ADD CONSTRAINT "catalog_currencies_provider_id_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "platform"."providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "platform"."catalog_pairs" ADD CONSTRAINT "catalog_pairs_provider_id_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "platform"."providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "catalog_changes_provider_idx" ON "platform"."catalog_changes" USING btree ("provider_id","changed_at");--> statement-breakpoint
CREATE INDEX "catalog_syncs_provider_idx" ON "platform"."catalog_syncs" USING btree ("provider_id","started_at");--> statement-breakpoint
CREATE INDEX "gateway_quotes_created_idx" ON "platform"."gateway_quotes" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "outbox_pending_key_idx" ON "platform"."outbox" USING btree ("aggregate_key","seq") WHERE "platform"."outbox"."published_at" is null;--> statement-breakpoint
CREATE INDEX "outbox_pending_seq_idx" ON "platform"."outbox" USING btree ("seq") WHERE "platform"."outbox"."published_at" is null;
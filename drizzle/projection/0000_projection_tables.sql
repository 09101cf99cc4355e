CREATE TABLE "event_journal" (
	"event_id" uuid PRIMARY KEY NOT NULL,
	"topic" text NOT NULL,
	"partition" integer NOT NULL,
	"offset" bigint NOT NULL,
	"event_type" text NOT NULL,
	"swap_id" text,
	"aggregate_key" text NOT NULL,
	"provider_id" text NOT NULL,
	"source" text NOT NULL,
	"occurred_at" timestamp(3) with time zone NOT NULL,
	"recorded_at" timestamp(3) with time zone NOT NULL,
	"outcome" text NOT NULL,
	"reason" text,
	"changes" jsonb,
	"payload" jsonb NOT NULL,
	CONSTRAINT "event_journal_outcome_chk" CHECK ("event_journal"."outcome" in ('applied', 'rejected', 'noop', 'parked'))
);
--> statement-breakpoint
CREATE TABLE "projector_checkpoints" (
	"topic" text NOT NULL,
	"partition" integer NOT NULL,
	"next_offset" bigint NOT NULL,
	CONSTRAINT "projector_checkpoints_topic_partition_pk" PRIMARY KEY("topic","partition")
);
--> statement-breakpoint
CREATE TABLE "quotes" (
	"quote_ref" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"outcome" text NOT NULL,
	"trade_method" text NOT NULL,
	"quote_id" text,
	"currency_from" text NOT NULL,
	"currency_to" text NOT NULL,
	"amount_from" numeric,
	"amount_to" numeric,
	"provider_fees" numeric,
	"referral_fees" numeric,
	"payout_network_fees" numeric,
	"expiry" timestamp(3) with time zone,
	"default_slippage" numeric,
	"min_slippage" numeric,
	"max_slippage" numeric,
	"error_key" text,
	"error_message" text,
	"received_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reconciliation_queue" (
	"swap_id" text PRIMARY KEY NOT NULL,
	"queued_by_event_id" uuid NOT NULL,
	"queued_at" timestamp(3) with time zone NOT NULL,
	"reason" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reconciliations" (
	"swap_id" text PRIMARY KEY NOT NULL,
	"event_id" uuid NOT NULL,
	"based_on_event_id" uuid NOT NULL,
	"verdict" text NOT NULL,
	"checks" jsonb NOT NULL,
	"reconciled_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "swap_requests" (
	"request_id" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"idempotency_key" text,
	"trade_method" text NOT NULL,
	"quote_ref" text,
	"amount_from" numeric,
	"currency_from" text NOT NULL,
	"currency_to" text NOT NULL,
	"requested_at" timestamp(3) with time zone NOT NULL,
	"outcome" text NOT NULL,
	"failure_kind" text,
	"failure_reason" text,
	"http_status" integer,
	"error_key" text
);
--> statement-breakpoint
CREATE TABLE "swaps" (
	"swap_id" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"request_id" text NOT NULL,
	"trade_method" text NOT NULL,
	"quote_ref" text,
	"quote_id" text,
	"currency_from" text NOT NULL,
	"currency_to" text NOT NULL,
	"payload_currency_from" text NOT NULL,
	"payload_currency_to" text NOT NULL,
	"amount_from" numeric,
	"quoted_amount_to" numeric,
	"slippage" numeric,
	"payin_address" text NOT NULL,
	"payout_address" text NOT NULL,
	"payout_extra_id" text,
	"refund_address" text NOT NULL,
	"refund_extra_id" text,
	"nonce" text NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"created_provider_fees" numeric NOT NULL,
	"created_referral_fees" numeric NOT NULL,
	"created_payout_network_fees" numeric NOT NULL,
	"signed_amount_to_provider" numeric(78, 0),
	"signed_amount_to_wallet" numeric(78, 0),
	"signature_valid" boolean NOT NULL,
	"status" text NOT NULL,
	"provider_status" text,
	"final" boolean DEFAULT false NOT NULL,
	"final_at" timestamp(3) with time zone,
	"amount_to" numeric,
	"provider_fees" numeric,
	"referral_fees" numeric,
	"payout_network_fees" numeric,
	"payin_transaction_id" text,
	"payout_transaction_id" text,
	"corrected" boolean DEFAULT false NOT NULL,
	"last_correction_event_id" uuid,
	"version" integer NOT NULL,
	"last_event_id" uuid NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "swaps_trade_method_chk" CHECK ("swaps"."trade_method" in ('fixed', 'float')),
	CONSTRAINT "swaps_final_at_chk" CHECK (("swaps"."final") = ("swaps"."final_at" is not null))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "event_journal_position_idx" ON "event_journal" USING btree ("topic","partition","offset");--> statement-breakpoint
CREATE INDEX "event_journal_swap_idx" ON "event_journal" USING btree ("swap_id","topic","partition","offset");--> statement-breakpoint
CREATE INDEX "swaps_open_idx" ON "swaps" USING btree ("provider_id","created_at") WHERE not "swaps"."final";--> statement-breakpoint
CREATE INDEX "swaps_request_idx" ON "swaps" USING btree ("request_id");
CREATE SCHEMA IF NOT EXISTS "platform";
--> statement-breakpoint
CREATE TABLE "platform"."created_swaps" (
	"swap_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"recorded_at" timestamp(3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "created_swaps_swap_id_provider_id_pk" PRIMARY KEY("swap_id","provider_id")
);
--> statement-breakpoint
CREATE TABLE "platform"."provider_api_keys" (
	"provider_id" text NOT NULL,
	"key_id" text NOT NULL,
	"sha256" text NOT NULL,
	"created_at" timestamp(3) with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp(3) with time zone,
	CONSTRAINT "provider_api_keys_provider_id_key_id_pk" PRIMARY KEY("provider_id","key_id"),
	CONSTRAINT "provider_api_keys_sha256_key" UNIQUE("sha256"),
	CONSTRAINT "provider_api_keys_sha256_chk" CHECK ("platform"."provider_api_keys"."sha256" ~ '^[0-9a-f]{64}$')
);
--> statement-breakpoint
CREATE TABLE "platform"."provider_currency_map" (
	"provider_id" text NOT NULL,
	"partner_currency_id" text NOT NULL,
	"platform_currency_id" text NOT NULL,
	CONSTRAINT "provider_currency_map_provider_id_partner_currency_id_pk" PRIMARY KEY("provider_id","partner_currency_id")
);
--> statement-breakpoint
CREATE TABLE "platform"."provider_final_statuses" (
	"provider_id" text NOT NULL,
	"status" text NOT NULL,
	CONSTRAINT "provider_final_statuses_provider_id_status_pk" PRIMARY KEY("provider_id","status"),
	CONSTRAINT "provider_final_statuses_chk" CHECK ("platform"."provider_final_statuses"."status" in ('FINISHED', 'EXPIRED', 'ON_HOLD', 'PENDING', 'REFUNDED', 'UNKNOWN'))
);
--> statement-breakpoint
CREATE TABLE "platform"."provider_payload_keys" (
	"provider_id" text NOT NULL,
	"key_id" text NOT NULL,
	"curve" text NOT NULL,
	"public_key" text NOT NULL,
	"valid_from" timestamp(3) with time zone NOT NULL,
	"valid_to" timestamp(3) with time zone,
	CONSTRAINT "provider_payload_keys_provider_id_key_id_pk" PRIMARY KEY("provider_id","key_id"),
	CONSTRAINT "provider_payload_keys_curve_chk" CHECK ("platform"."provider_payload_keys"."curve" in ('secp256k1', 'secp256r1')),
	CONSTRAINT "provider_payload_keys_window_chk" CHECK ("platform"."provider_payload_keys"."valid_to" is null or "platform"."provider_payload_keys"."valid_to" > "platform"."provider_payload_keys"."valid_from")
);
--> statement-breakpoint
CREATE TABLE "platform"."provider_status_map" (
	"provider_id" text NOT NULL,
	"partner_status" text NOT NULL,
	"internal_status" text NOT NULL,
	CONSTRAINT "provider_status_map_provider_id_partner_status_pk" PRIMARY KEY("provider_id","partner_status"),
	CONSTRAINT "provider_status_map_internal_chk" CHECK ("platform"."provider_status_map"."internal_status" in ('FINISHED', 'EXPIRED', 'ON_HOLD', 'PENDING', 'REFUNDED', 'UNKNOWN'))
);
--> statement-breakpoint
CREATE TABLE "platform"."providers" (
	"id" text PRIMARY KEY NOT NULL,
	"display_name" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"base_url" text NOT NULL,
	"auth_headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"client_options" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"poll_interval_seconds" integer NOT NULL,
	"rate_limit_per_second" integer NOT NULL,
	"rate_limit_burst" integer NOT NULL,
	"managed_by" text NOT NULL,
	"created_at" timestamp(3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp(3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "providers_id_chk" CHECK ("platform"."providers"."id" ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
	CONSTRAINT "providers_poll_chk" CHECK ("platform"."providers"."poll_interval_seconds" > 0),
	CONSTRAINT "providers_rate_chk" CHECK ("platform"."providers"."rate_limit_per_second" > 0 and "platform"."providers"."rate_limit_burst" > 0),
	CONSTRAINT "providers_managed_by_chk" CHECK ("platform"."providers"."managed_by" in ('file', 'cli'))
);
--> statement-breakpoint
ALTER TABLE "platform"."provider_api_keys" ADD CONSTRAINT "provider_api_keys_provider_id_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "platform"."providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "platform"."provider_currency_map" ADD CONSTRAINT "provider_currency_map_provider_id_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "platform"."providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "platform"."provider_final_statuses" ADD CONSTRAINT "provider_final_statuses_provider_id_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "platform"."providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "platform"."provider_payload_keys" ADD CONSTRAINT "provider_payload_keys_provider_id_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "platform"."providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "platform"."provider_status_map" ADD CONSTRAINT "provider_status_map_provider_id_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "platform"."providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "created_swaps_recorded_idx" ON "platform"."created_swaps" USING btree ("recorded_at");
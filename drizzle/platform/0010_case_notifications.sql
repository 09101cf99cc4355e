CREATE TABLE "platform"."case_notifications" (
	"provider_id" text NOT NULL,
	"swap_id" text NOT NULL,
	"opening" integer NOT NULL,
	"kind" text NOT NULL,
	"message" jsonb NOT NULL,
	"created_at" timestamp(3) with time zone DEFAULT now() NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp(3) with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp(3) with time zone,
	"last_error" text,
	CONSTRAINT "case_notifications_pkey" PRIMARY KEY("provider_id","swap_id","opening","kind"),
	CONSTRAINT "case_notifications_kind_chk" CHECK ("platform"."case_notifications"."kind" in ('opened', 'reopened', 'aged'))
);
--> statement-breakpoint
CREATE INDEX "case_notifications_undelivered_idx" ON "platform"."case_notifications" USING btree ("next_attempt_at") WHERE "platform"."case_notifications"."delivered_at" is null;
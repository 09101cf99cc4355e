CREATE TABLE "period_events" (
	"event_id" uuid PRIMARY KEY NOT NULL,
	"period" text NOT NULL,
	"kind" text NOT NULL,
	"operator" text NOT NULL,
	"reason" text NOT NULL,
	"digest" text NOT NULL,
	"previous_digest" text,
	"posting_count" integer,
	"statement_ids" jsonb,
	"accepted_differences" boolean NOT NULL,
	"recorded_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "period_events_kind_chk" CHECK ("period_events"."kind" in ('closed', 'reopened')),
	CONSTRAINT "period_events_period_chk" CHECK ("period_events"."period" ~ '^[0-9]{4}-(0[1-9]|1[0-2])$')
);
--> statement-breakpoint
CREATE TABLE "statement_lines" (
	"statement_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"provider_id" text NOT NULL,
	"line_no" integer,
	"swap_id" text NOT NULL,
	"outcome" text NOT NULL,
	"status_word" text,
	"status" text,
	"finished_at" timestamp(3) with time zone,
	"currency_from" text,
	"amount_from" numeric,
	"currency_to" text,
	"amount_to" numeric,
	"provider_fee" numeric,
	"referral_fee" numeric,
	"payout_network_fee" numeric,
	"ledger_status" text,
	"prior_period" text,
	"differences" jsonb NOT NULL,
	CONSTRAINT "statement_lines_pkey" PRIMARY KEY("statement_id","seq"),
	CONSTRAINT "statement_lines_outcome_chk" CHECK ("statement_lines"."outcome" in ('matched', 'statement_only', 'ledger_only', 'status_differs', 'amount_differs'))
);
--> statement-breakpoint
CREATE TABLE "statements" (
	"statement_id" uuid PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"period" text NOT NULL,
	"file_name" text NOT NULL,
	"file_digest" text NOT NULL,
	"layout" text NOT NULL,
	"operator" text NOT NULL,
	"reason" text,
	"supersedes" uuid,
	"line_count" integer NOT NULL,
	"imported_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "statements_period_chk" CHECK ("statements"."period" ~ '^[0-9]{4}-(0[1-9]|1[0-2])$')
);
--> statement-breakpoint
CREATE INDEX "period_events_period_idx" ON "period_events" USING btree ("period");--> statement-breakpoint
CREATE INDEX "statement_lines_swap_idx" ON "statement_lines" USING btree ("provider_id","swap_id");--> statement-breakpoint
CREATE INDEX "statements_provider_period_idx" ON "statements" USING btree ("provider_id","period");
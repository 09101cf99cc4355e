CREATE TABLE "invoice_lines" (
	"event_id" uuid NOT NULL,
	"invoice_number" text NOT NULL,
	"seq" integer NOT NULL,
	"provider_id" text NOT NULL,
	"swap_id" text NOT NULL,
	"currency" text NOT NULL,
	"referral_fee" numeric NOT NULL,
	"disputed" text,
	CONSTRAINT "invoice_lines_pkey" PRIMARY KEY("event_id","seq")
);
--> statement-breakpoint
CREATE TABLE "invoices" (
	"event_id" uuid PRIMARY KEY NOT NULL,
	"invoice_number" text NOT NULL,
	"provider_id" text NOT NULL,
	"period" text NOT NULL,
	"operator" text NOT NULL,
	"issued_at" timestamp(3) with time zone NOT NULL,
	"due_date" text NOT NULL,
	"reason" text,
	"supersedes" text,
	"totals" jsonb NOT NULL,
	CONSTRAINT "invoices_period_chk" CHECK ("invoices"."period" ~ '^[0-9]{4}-(0[1-9]|1[0-2])$')
);
--> statement-breakpoint
CREATE INDEX "invoice_lines_swap_idx" ON "invoice_lines" USING btree ("provider_id","swap_id");--> statement-breakpoint
CREATE INDEX "invoices_provider_period_idx" ON "invoices" USING btree ("provider_id","period");--> statement-breakpoint
CREATE INDEX "invoices_number_idx" ON "invoices" USING btree ("invoice_number");
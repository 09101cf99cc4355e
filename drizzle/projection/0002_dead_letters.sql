CREATE TABLE "dead_letters" (
	"dead_letter_id" text PRIMARY KEY NOT NULL,
	"topic" text NOT NULL,
	"partition" integer NOT NULL,
	"offset" bigint NOT NULL,
	"aggregate_key" text NOT NULL,
	"reason" text NOT NULL,
	"value_base64" text NOT NULL,
	"failed_at" timestamp(3) with time zone NOT NULL,
	"status" text NOT NULL,
	"resolved_by_event_id" uuid,
	"resolved_by" text,
	"resolution" text,
	CONSTRAINT "dead_letters_status_chk" CHECK ("dead_letters"."status" in ('open', 'retried', 'discarded'))
);
--> statement-breakpoint
CREATE INDEX "dead_letters_open_idx" ON "dead_letters" USING btree ("aggregate_key") WHERE "dead_letters"."status" = 'open';--> statement-breakpoint
CREATE INDEX "event_journal_parked_idx" ON "event_journal" USING btree ("aggregate_key","offset") WHERE "event_journal"."outcome" = 'parked';
CREATE TABLE "platform"."reconciliation_claims" (
	"round_id" uuid PRIMARY KEY NOT NULL,
	"claimed_by" text NOT NULL,
	"claimed_until" timestamp(3) with time zone NOT NULL,
	"queued_by_event_ids" uuid[] NOT NULL
);

ALTER TABLE "platform"."outbox" ADD COLUMN "trace_parent" text;--> statement-breakpoint
ALTER TABLE "platform"."outbox" ADD COLUMN "trace_state" text;
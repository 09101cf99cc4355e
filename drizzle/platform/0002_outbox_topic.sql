DROP INDEX "platform"."outbox_pending_seq_idx";--> statement-breakpoint
ALTER TABLE "platform"."outbox" ADD COLUMN "topic" text NOT NULL;--> statement-breakpoint
CREATE INDEX "outbox_pending_topic_seq_idx" ON "platform"."outbox" USING btree ("topic","seq") WHERE "platform"."outbox"."published_at" is null;
CREATE TABLE "platform"."work_leases" (
	"kind" text NOT NULL,
	"key" text NOT NULL,
	"owner" text,
	"lease_until" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "work_leases_pkey" PRIMARY KEY("kind","key")
);
--> statement-breakpoint
CREATE INDEX "work_leases_idle_idx" ON "platform"."work_leases" USING btree ("kind","lease_until") WHERE "platform"."work_leases"."owner" is null;
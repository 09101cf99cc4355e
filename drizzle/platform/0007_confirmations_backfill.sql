-- Custom SQL migration file, put your code below! --
-- Rows written before confirmations repeated (one confirming poll each): their attempt time is when they
-- were recorded. Those recorded within the default deadline (48 h) stay confirming, due at once, so the
-- swaps a lagging or blank GET /status left unconfirmed are asked again; older ones are past any useful
-- confirming and end as they were (abandoned, missing figures unknown here: not listed as never reported).
UPDATE "platform"."poll_confirmations" SET "last_attempt_at" = "confirmed_at";--> statement-breakpoint
UPDATE "platform"."poll_confirmations" SET "state" = 'abandoned', "ended_at" = "confirmed_at"
WHERE "confirmed_at" < now() - interval '48 hours';

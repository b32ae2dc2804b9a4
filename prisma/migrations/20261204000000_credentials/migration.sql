-- A credential that ends (a sign-in session deleted by sign-out, sign-out everywhere or a
-- password change; an API token revoked) tells every app process at once, whoever deleted it:
-- their open live feeds of that person re-check and end (live/activity.ts `credentialsKey`).
CREATE FUNCTION notify_credential_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('agent_activity', json_build_object('s', 'user:' || OLD.user_id, 'k', 'credentials')::text);
  RETURN NULL;
END;
$$;

CREATE TRIGGER auth_sessions_ended AFTER DELETE ON auth_sessions
  FOR EACH ROW EXECUTE FUNCTION notify_credential_ended();

CREATE TRIGGER api_tokens_ended AFTER DELETE ON api_tokens
  FOR EACH ROW EXECUTE FUNCTION notify_credential_ended();

-- Per-account sign-in throttling (people/sign-in-throttle.ts).
CREATE TABLE "sign_in_throttle" (
    "key" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "sign_in_throttle_pkey" PRIMARY KEY ("key")
);

CREATE TABLE "sign_in_addresses" (
    "user_id" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "last_success_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "sign_in_addresses_pkey" PRIMARY KEY ("user_id", "address")
);

ALTER TABLE "sign_in_addresses" ADD CONSTRAINT "sign_in_addresses_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Invite links usable by several people (a class joining at once): `uses` of `max_uses`, each
-- use a row naming the email that claimed it (a sign-up claims before the account exists) and,
-- once the account exists, the person.
ALTER TABLE "team_invites" ADD COLUMN "max_uses" INTEGER NOT NULL DEFAULT 1, ADD COLUMN "uses" INTEGER NOT NULL DEFAULT 0;

CREATE TABLE "team_invite_uses" (
    "id" BIGSERIAL NOT NULL,
    "invite_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "user_id" TEXT,
    "used_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "team_invite_uses_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "team_invite_uses_invite_id_email_idx" ON "team_invite_uses"("invite_id", "email");
ALTER TABLE "team_invite_uses" ADD CONSTRAINT "team_invite_uses_invite_id_fkey" FOREIGN KEY ("invite_id") REFERENCES "team_invites"("id") ON DELETE CASCADE ON UPDATE CASCADE;

UPDATE "team_invites" SET "uses" = 1 WHERE "accepted_at" IS NOT NULL;
INSERT INTO "team_invite_uses" ("invite_id", "email", "user_id", "used_at")
  SELECT i."id", coalesce(lower(u."email"), ''), i."accepted_by", i."accepted_at"
  FROM "team_invites" i LEFT JOIN "users" u ON u."id" = i."accepted_by"
  WHERE i."accepted_at" IS NOT NULL;
ALTER TABLE "team_invites" DROP COLUMN "accepted_by", DROP COLUMN "accepted_at";

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

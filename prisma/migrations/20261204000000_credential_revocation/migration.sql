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

import { describe, expect, it } from "vitest";
import { parseEnv } from "../env";
import { ssoConfigOf } from "./sso";

// Single sign-on's configuration: all three settings or none; the flow itself is tested end to
// end against a real OpenID provider (e2e/sso.spec.ts).

describe("ssoConfigOf", () => {
  it("is off without settings, on with all three, and refuses a partial configuration at start-up", () => {
    expect(ssoConfigOf(parseEnv({}))).toBeNull();
    expect(ssoConfigOf(parseEnv({ OIDC_ISSUER: "https://id.example.test/realms/acme/", OIDC_CLIENT_ID: "teams", OIDC_CLIENT_SECRET: "s3cret", OIDC_NAME: "Acme" }))).toEqual({
      issuer: "https://id.example.test/realms/acme",
      clientId: "teams",
      clientSecret: "s3cret",
      name: "Acme",
    });
    expect(ssoConfigOf(parseEnv({ OIDC_ISSUER: "https://id.example.test", OIDC_CLIENT_ID: "teams", OIDC_CLIENT_SECRET: "s3cret" }))?.name).toBe("single sign-on");
    expect(() => parseEnv({ OIDC_ISSUER: "https://id.example.test", OIDC_CLIENT_ID: "teams" })).toThrow(/OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET go together/);
    expect(() => parseEnv({ OIDC_CLIENT_SECRET: "s3cret" })).toThrow(/go together/);
  });
});

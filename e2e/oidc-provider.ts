import type { Server } from "node:http";
import Provider from "oidc-provider";

// A real OpenID provider for the single sign-on tests (the `oidc-provider` package), with its
// development login and consent pages: any login name is accepted and becomes the account,
// whose claims come from `accounts`.

export interface IdpAccount {
  email: string;
  emailVerified: boolean;
  name: string;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

export async function startTestIdp(port: number, appUrl: string, accounts: Record<string, IdpAccount>): Promise<TestIdp> {
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = "agent-teams";
  const clientSecret = "a-test-client-secret-of-some-length";
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [`${appUrl}/api/auth/callback/oidc`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    scopes: ["openid", "email", "profile"],
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    // The development login and consent pages (the provider warns that they are for development).
    features: { devInteractions: { enabled: true } },
    findAccount: (_ctx, sub) => {
      const account = accounts[sub];
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: () => ({ sub, email: account.email, email_verified: account.emailVerified, name: account.name }),
      };
    },
  });
  const server: Server = await new Promise((resolve) => {
    const s = provider.listen(port, "127.0.0.1", () => resolve(s));
  });
  return {
    issuer,
    clientId,
    clientSecret,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

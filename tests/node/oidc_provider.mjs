// A real OpenID Connect provider for the dashboard's login test (npm `oidc-provider`, the
// certified implementation). Usage: node oidc_provider.mjs REDIRECT_URI
// Listens on a free port of 127.0.0.1 and prints one JSON line: {"issuer", "client_id",
// "client_secret"}. Its development login form accepts any user name with any password; the
// account's e-mail claim is the user name typed. The first-party client gets its grant without
// a consent screen.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import Provider from 'oidc-provider';

const redirectUri = process.argv[2];
if (!redirectUri) {
  console.error('usage: node oidc_provider.mjs REDIRECT_URI');
  process.exit(2);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const port = await freePort();
const issuer = `http://127.0.0.1:${port}`;
const client = {
  client_id: 'pontual-painel',
  client_secret: randomBytes(24).toString('hex'),
  redirect_uris: [redirectUri],
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
};

const provider = new Provider(issuer, {
  clients: [client],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  cookies: { keys: [randomBytes(16).toString('hex')] },
  features: { devInteractions: { enabled: true } },
  // the e-mail in the ID token itself (Streamlit's st.user reads the ID token's claims)
  conformIdTokenClaims: false,
  async findAccount(_ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: id, email_verified: true, name: id };
      },
    };
  },
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId
      || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    // first-party client: grant what it asks for, no consent screen
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope('openid email profile');
    await grant.save();
    return grant;
  },
});
provider.proxy = false;
provider.listen(port, '127.0.0.1', () => {
  console.log(JSON.stringify({ issuer, client_id: client.client_id, client_secret: client.client_secret }));
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));

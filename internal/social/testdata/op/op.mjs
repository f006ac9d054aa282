// A real OpenID Connect provider for internal/social's tests: panva's
// oidc-provider with its own signing key, discovery and the clients the
// test passes in OP_CLIENTS (JSON). Its development login pages are off;
// the test signs a person in by posting their claims to
// /interaction/<uid>/login, and consent is skipped by granting every
// client the scopes it asks for. It prints {"event":"listening",
// "issuer":...} when ready and stops when its stdin closes.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const accounts = new Map();
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const key = { ...privateKey.export({ format: 'jwk' }), kid: 'op-' + randomBytes(4).toString('hex'), use: 'sig', alg: 'RS256' };

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: JSON.parse(process.env.OP_CLIENTS),
    jwks: { keys: [key] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name', 'name'] },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(ctx, sub) {
      const claims = accounts.get(sub);
      return claims && { accountId: sub, claims: async () => ({ sub, ...claims }) };
    },
    // No consent screen: every client gets what it asks for.
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope(ctx.oidc.params.scope);
      await grant.save();
      return grant;
    },
  });
  const op = provider.callback();
  server.on('request', async (req, res) => {
    const m = req.url.match(/^\/interaction\/([^/?]+)(\/login)?/);
    if (!m) {
      op(req, res);
      return;
    }
    try {
      const details = await provider.interactionDetails(req, res);
      if (req.method === 'GET') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ uid: details.uid, prompt: details.prompt.name }));
        return;
      }
      const form = new URLSearchParams(await body(req));
      const sub = form.get('sub');
      const claims = {};
      for (const name of ['email', 'given_name', 'family_name', 'name']) {
        if (form.get(name)) claims[name] = form.get(name);
      }
      if (form.has('email_verified')) claims.email_verified = form.get('email_verified') === 'true';
      accounts.set(sub, claims);
      await provider.interactionFinished(req, res, { login: { accountId: sub } }, { mergeWithLastSubmission: false });
    } catch (err) {
      res.statusCode = 400;
      res.end(String(err));
    }
  });
  console.log(JSON.stringify({ event: 'listening', issuer }));
});

function body(req) {
  return new Promise((resolve, reject) => {
    let data = '';
    req.on('data', (chunk) => { data += chunk; });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

process.stdin.resume();
process.stdin.on('end', () => process.exit(0));

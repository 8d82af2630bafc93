// A real OAuth 2.1 / OpenID Connect authorization server on loopback for
// tasksbridge's authorization interop tests: panva's oidc-provider (the
// certified Node.js implementation), configured for machines.
//
//   - discovery: /.well-known/openid-configuration (RFC 8414 fields), JWKS at
//     /jwks (an ES256 key signs access tokens, an RS256 key ID tokens);
//   - grants: client_credentials, authorization_code with PKCE (S256) and
//     refresh_token (issued to every client registered for that grant);
//   - resource indicators (RFC 8707): a `resource` parameter naming a loopback
//     http URL gets a JWT access token (typ at+jwt) whose aud is that URL,
//     scope "mcp"; other resources are refused with invalid_target;
//     --token-format opaque issues opaque tokens for them instead;
//   - introspection (RFC 7662) at /token/introspection (of opaque tokens:
//     oidc-provider refuses to introspect its JWTs), dynamic client
//     registration (RFC 7591) at /reg;
//   - a programmatic user: the login and consent interactions approve
//     themselves (account "e2e-user", every requested scope), so a client that
//     follows the redirects of the authorization endpoint with a cookie jar
//     ends at its redirect_uri with a code. No browser, no form.
//
// Usage: node as.mjs [--port 0] [--access-ttl SECONDS (300)] [--token-format jwt|opaque]
//          [--client ID:SECRET]... [--no-registration] [--exit-on-stdin-close] [--log]
// Prints `listening http://127.0.0.1:PORT/` once it serves; the issuer is that
// URL without the trailing slash. Binds 127.0.0.1 only.
import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import { parseArgs } from 'node:util';
import Provider, { errors } from 'oidc-provider';

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'access-ttl': { type: 'string', default: '300' },
    'token-format': { type: 'string', default: 'jwt' },
    client: { type: 'string', multiple: true, default: [] },
    'no-registration': { type: 'boolean', default: false },
    'exit-on-stdin-close': { type: 'boolean', default: false },
    log: { type: 'boolean', default: false },
  },
});

const fail = (msg) => {
  process.stderr.write(`as: ${msg}\n`);
  process.exit(2);
};
const accessTTL = Number.parseInt(opts['access-ttl'], 10);
if (!Number.isInteger(accessTTL) || accessTTL <= 0) fail('--access-ttl must be a positive number of seconds');
const port = Number.parseInt(opts.port, 10);
if (!['jwt', 'opaque'].includes(opts['token-format'])) fail('--token-format must be jwt or opaque');
if (!Number.isInteger(port) || port < 0) fail('--port must be a port number');

const REDIRECTS = ['http://127.0.0.1/callback', 'http://localhost:3000/callback'];
const clients = opts.client.map((spec) => {
  const i = spec.indexOf(':');
  if (i <= 0 || i === spec.length - 1) fail(`--client ${spec}: want ID:SECRET`);
  return {
    client_id: spec.slice(0, i),
    client_secret: spec.slice(i + 1),
    grant_types: ['client_credentials', 'authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: REDIRECTS,
    token_endpoint_auth_method: 'client_secret_basic',
  };
});

// Fresh keys every run: nothing secret is kept in the repository.
const jwk = (alg, pair) => ({ ...pair.privateKey.export({ format: 'jwk' }), alg, use: 'sig', kid: `${alg.toLowerCase()}-${process.pid}` });
const keys = [
  jwk('ES256', generateKeyPairSync('ec', { namedCurve: 'P-256' })),
  jwk('RS256', generateKeyPairSync('rsa', { modulusLength: 2048 })),
];

// A resource indicator is accepted when it is a loopback http(s) URL without
// a fragment: the MCP endpoints the tests start (RFC 8707 §2).
function loopbackResource(indicator) {
  try {
    const u = new URL(indicator);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.hash && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
  } catch {
    return false;
  }
}

async function start() {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const log = (...a) => opts.log && process.stderr.write(`as: ${a.join(' ')}\n`);

  const provider = new Provider(issuer, {
    clients,
    jwks: { keys },
    scopes: ['openid', 'offline_access', 'mcp'],
    claims: { openid: ['sub'] },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      registration: { enabled: !opts['no-registration'] },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (!loopbackResource(indicator)) throw new errors.InvalidTarget(`resource ${indicator} is not a loopback MCP endpoint`);
          return {
            scope: 'mcp',
            audience: indicator,
            accessTokenTTL: accessTTL,
            accessTokenFormat: opts['token-format'],
            ...(opts['token-format'] === 'jwt' ? { jwt: { sign: { alg: 'ES256' } } } : {}),
          };
        },
      },
    },
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? accessTTL,
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? accessTTL,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      RefreshToken: 3600,
    },
    // A refresh token for every client allowed the refresh_token grant, not
    // only with offline_access (which oidc-provider drops unless the request
    // says prompt=consent, and MCP clients do not).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // Discovery and tokens are fetched by tests' clients without Origin.
    clientBasedCORS: () => true,
    renderError: async (ctx, out) => {
      ctx.type = 'application/json';
      ctx.body = out;
    },
  });

  // The programmatic user: approve login, then consent to everything asked.
  provider.use(async (ctx, next) => {
    const m = /^\/interaction\/([^/]+)$/.exec(ctx.path);
    if (!m || ctx.method !== 'GET') return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    let result;
    if (details.prompt.name === 'login') {
      result = { login: { accountId: 'e2e-user' } };
    } else {
      const d = details.prompt.details;
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
      if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
      if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(d.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
      result = { consent: { grantId: await grant.save() } };
    }
    log('interaction', details.prompt.name, 'approved');
    const to = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
    ctx.redirect(to);
  });
  if (opts.log) {
    provider.use(async (ctx, next) => {
      await next();
      log(ctx.method, ctx.path, ctx.status);
    });
    for (const ev of ['grant.error', 'server_error', 'registration_create.error', 'introspection.error', 'authorization.error']) {
      provider.on(ev, (_ctx, err) => log(ev, err?.message ?? '', err?.error_description ?? ''));
    }
  }

  server.on('request', provider.callback());
  process.stdout.write(`listening ${issuer}/\n`);
  const stop = () => server.close(() => process.exit(0));
  if (opts['exit-on-stdin-close']) {
    process.stdin.on('end', stop);
    process.stdin.on('close', stop);
    process.stdin.resume();
  }
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

start().catch((err) => fail(err.stack ?? String(err)));

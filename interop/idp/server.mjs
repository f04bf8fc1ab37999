// A real OpenID provider for isogate's auth tests: panva's oidc-provider
// (pinned in package.json), issuing JWT access tokens bound to a resource
// (RFC 8707) by the client credentials grant.
//
//   node server.mjs   (environment: IDP_RESOURCE, the resource URL tokens
//                      are for by default; IDP_JWKS, a private JWKS)
//
// It prints "listening <issuer>" once ready. POST /__rotate with a private
// JWKS as body makes the provider sign with those keys from then on (key
// rotation without a restart of isogate). Clients (secret = id + "-secret"):
//   alice  groups [eng],        scopes mcp:tools mcp:admin
//   bob    groups [contractor], scopes mcp:tools
//   carol  groups [eng],        scope  mcp:read (lacks mcp:tools)
// Dynamic client registration (RFC 7591) is open; an authorization code
// login is completed at once for the person "dave".
//   gateway                     scope  backend:read: isogate as a client of
//                               its backends (client credentials, and
//                               token exchange, RFC 8693, of a token this
//                               provider issued for an access token whose
//                               sub is the subject's and act.sub "gateway").
// Tokens for any resource other than IDP_RESOURCE (a backend's) live
// IDP_BACKEND_TTL seconds (default 300).
import http from 'node:http';
import * as jose from 'jose';
import Provider from 'oidc-provider';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const backendTTL = Number(process.env.IDP_BACKEND_TTL || 300);

const resource = process.env.IDP_RESOURCE;
let jwks = JSON.parse(process.env.IDP_JWKS);
const groups = { alice: ['eng'], bob: ['contractor'], carol: ['eng'], gateway: [] };
const scopes = { alice: 'mcp:tools mcp:admin', bob: 'mcp:tools', carol: 'mcp:read', gateway: 'backend:read' };

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  let provider = make(issuer);
  server.on('request', (req, res) => {
    if (req.url.startsWith('/interaction/')) {
      // The person at the browser: always "dave", who always agrees.
      finishInteraction(provider, req, res).catch((err) => { res.statusCode = 500; res.end(String(err)); });
      return;
    }
    if (req.method === 'POST' && req.url === '/__rotate') {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        jwks = JSON.parse(body);
        provider = make(issuer);
        res.end('rotated');
      });
      return;
    }
    provider.callback()(req, res);
  });
  console.log(`listening ${issuer}`);
});

// finishInteraction logs "dave" in, and grants what the client asked.
async function finishInteraction(provider, req, res) {
  const { prompt, params, session } = await provider.interactionDetails(req, res);
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: 'dave' } }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = new provider.Grant({ clientId: params.client_id, accountId: session.accountId });
  const { missingOIDCScope, missingResourceScopes } = prompt.details;
  if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
  for (const [indicator, scope] of Object.entries(missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scope.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

function make(issuer) {
  const clients = Object.keys(groups).map((id) => ({
    client_id: id,
    client_secret: `${id}-secret`,
    grant_types: id === 'gateway' ? ['client_credentials', TOKEN_EXCHANGE] : ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    scope: scopes[id],
  }));
  const provider = new Provider(issuer, {
    clients,
    jwks,
    scopes: ['mcp:tools', 'mcp:admin', 'mcp:read', 'backend:read'],
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    // Authorization code logins (isogate login) get refresh tokens.
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator, client) => ({
          scope: scopes[client.clientId] ?? 'backend:read',
          audience: indicator,
          accessTokenTTL: indicator === resource ? 300 : backendTTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (ctx, token) => ({
      groups: groups[ctx.oidc.exchangedSubject ?? token.clientId] ?? [],
      ...(ctx.oidc.exchangedSubject ? { exchanged_sub: ctx.oidc.exchangedSubject } : {}),
    }),
    formats: {
      customizers: {
        // An exchanged token names the subject, and the gateway as actor.
        jwt: (ctx, token, jwt) => {
          if (jwt.payload.exchanged_sub) {
            jwt.payload.act = { sub: jwt.payload.sub };
            jwt.payload.sub = jwt.payload.exchanged_sub;
            delete jwt.payload.exchanged_sub;
          }
        },
      },
    },
  });
  provider.registerGrantType(TOKEN_EXCHANGE, tokenExchange, ['subject_token', 'subject_token_type', 'requested_token_type', 'resource', 'audience', 'scope']);
  return provider;
}

// tokenExchange (RFC 8693): the subject token must be an access token this
// provider signed; the new token is for the requested resource.
async function tokenExchange(ctx) {
  const { client, params, provider } = ctx.oidc;
  const fail = (error, description) => {
    ctx.status = 400;
    ctx.body = { error, error_description: description };
  };
  if (params.subject_token_type !== ACCESS_TOKEN_TYPE) {
    return fail('invalid_request', 'subject_token_type must be an access token');
  }
  let subject;
  try {
    const keys = jose.createLocalJWKSet({ keys: jwks.keys.map(({ d, p, q, dp, dq, qi, ...pub }) => pub) });
    ({ payload: subject } = await jose.jwtVerify(params.subject_token, keys, { issuer: provider.issuer }));
  } catch (err) {
    return fail('invalid_grant', `subject_token: ${err.message}`);
  }
  if (!params.resource) {
    return fail('invalid_target', 'resource is required');
  }
  const token = new provider.ClientCredentials({ client, scope: params.scope || scopes[client.clientId] });
  token.resourceServer = {
    audience: params.resource,
    scope: scopes[client.clientId],
    accessTokenTTL: backendTTL,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: 'RS256' } },
  };
  ctx.oidc.exchangedSubject = subject.sub;
  const value = await token.save();
  ctx.body = {
    access_token: value,
    issued_token_type: ACCESS_TOKEN_TYPE,
    token_type: 'Bearer',
    expires_in: token.expiration,
    scope: token.scope,
  };
}

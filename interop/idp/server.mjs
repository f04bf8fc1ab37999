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
import http from 'node:http';
import Provider from 'oidc-provider';

const resource = process.env.IDP_RESOURCE;
let jwks = JSON.parse(process.env.IDP_JWKS);
const groups = { alice: ['eng'], bob: ['contractor'], carol: ['eng'] };
const scopes = { alice: 'mcp:tools mcp:admin', bob: 'mcp:tools', carol: 'mcp:read' };

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  let provider = make(issuer);
  server.on('request', (req, res) => {
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

function make(issuer) {
  const clients = Object.keys(groups).map((id) => ({
    client_id: id,
    client_secret: `${id}-secret`,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    scope: scopes[id],
  }));
  return new Provider(issuer, {
    clients,
    jwks,
    scopes: ['mcp:tools', 'mcp:admin', 'mcp:read'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator, client) => ({
          scope: scopes[client.clientId],
          audience: indicator,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (ctx, token) => ({ groups: groups[token.clientId] ?? [] }),
  });
}

// An LTI 1.3 tool made with ltijs, a third-party tool library, run by
// internal/lti's interop test (ltijs_test.go) as an external tool of our
// platform. It speaks on stdout in JSON lines: {"event":"listening",
// "port":N} once it listens on 127.0.0.1, {"event":"registered"} once it
// has registered the platform described by a JSON line on stdin. A
// launch it accepts uses the grade services as ltijs does, with no line
// item of its own: it lists the line items bound to the launch's resource
// link (filters and a page size, with the read-only scope), posts a
// completed score of 8/10 for the launching learner on the line item the
// launch claims, reads that learner's result back, and answers what it
// saw as JSON; a deep linking request it accepts is answered with one
// resource link asking for a line item. It stops when stdin closes. Its state is kept by ltijs-sequelize
// in the PostgreSQL database named by the LTIJS_PG_* variables.
'use strict'

const http = require('http')
const readline = require('readline')
const lti = require('ltijs').Provider
const Database = require('ltijs-sequelize')

const env = process.env

function report (event) {
  process.stdout.write(JSON.stringify(event) + '\n')
}

const db = new Database(env.LTIJS_PG_DATABASE, env.LTIJS_PG_USER, env.LTIJS_PG_PASSWORD || '', {
  host: env.LTIJS_PG_HOST || '127.0.0.1',
  port: Number(env.LTIJS_PG_PORT || 5432),
  dialect: 'postgres',
  logging: false
})

// devMode stays off: the state cookie and the session cookie are required,
// as in production; the test's browser keeps cookies.
lti.setup(env.LTIJS_KEY, { plugin: db }, {
  appRoute: '/',
  loginRoute: '/login',
  keysetRoute: '/keys',
  cookies: { secure: false, sameSite: 'Lax' },
  devMode: false
})

// What ltijs accepted of the launch, for the test to check.
function seen (token) {
  const c = token.platformContext
  return {
    iss: token.iss,
    user: token.user,
    clientId: token.clientId,
    deploymentId: token.deploymentId,
    name: token.userInfo && token.userInfo.name,
    email: token.userInfo && token.userInfo.email,
    messageType: c.messageType,
    version: c.version,
    roles: c.roles,
    resource: c.resource,
    context: c.context,
    custom: c.custom,
    targetLinkUri: c.targetLinkUri,
    lineitems: c.endpoint && c.endpoint.lineitems,
    lineitem: c.endpoint && c.endpoint.lineitem,
    scopes: c.endpoint && c.endpoint.scope
  }
}

lti.onConnect(async (token, req, res) => {
  const launch = seen(token)
  try {
    const bound = await lti.Grade.getLineItems(token, { resourceLinkId: true, limit: 1 })
    const untagged = await lti.Grade.getLineItems(token, { tag: 'no-such-tag' })
    await lti.Grade.submitScore(token, launch.lineitem, {
      scoreGiven: 8,
      scoreMaximum: 10,
      activityProgress: 'Completed',
      gradingProgress: 'FullyGraded'
    })
    const results = await lti.Grade.getScores(token, launch.lineitem, { userId: token.user })
    return res.json({ launch, bound, untagged, results, scored: true })
  } catch (err) {
    const body = err.response ? String(err.response.body) : ''
    return res.status(502).json({ launch, error: err.message, body })
  }
})

// A deep linking request is answered at once with one resource link: the
// tool's own launch URL with a query, a custom parameter, and the line
// item the platform is asked to make for it.
lti.onDeepLinking(async (token, req, res) => {
  const items = [{
    type: 'ltiResourceLink',
    title: 'Exercise picked in ltijs',
    url: req.protocol + '://' + req.get('host') + '/?exercise=2',
    custom: { picked: 'yes' },
    lineItem: { label: 'Exercise 2', scoreMaximum: 5, tag: 'exercise' }
  }]
  const form = await lti.DeepLinking.createDeepLinkingForm(token, items, { message: 'One exercise added.' })
  return res.send(form)
})

lti.onInvalidToken(async (req, res) => {
  return res.status(401).json({ error: res.locals.err })
})

async function main () {
  await lti.deploy({ serverless: true, silent: true })
  const server = http.createServer(lti.app)
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  report({ event: 'listening', port: server.address().port })
  const lines = readline.createInterface({ input: process.stdin })
  for await (const line of lines) {
    if (!line.trim()) continue
    const p = JSON.parse(line)
    try {
      await lti.registerPlatform({
        url: p.issuer,
        name: 'LMS under test',
        clientId: p.client_id,
        authenticationEndpoint: p.authorization_url,
        accesstokenEndpoint: p.token_url,
        authConfig: { method: 'JWK_SET', key: p.jwks_url }
      })
      report({ event: 'registered' })
    } catch (err) {
      report({ event: 'error', error: err.message })
    }
  }
  server.closeAllConnections()
  server.close()
  await lti.close({ silent: true })
  process.exit(0)
}

main().catch(err => {
  report({ event: 'error', error: err.message })
  process.exit(1)
})

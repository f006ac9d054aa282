// An LTI 1.3 platform of the tests, written on jose (a JOSE library of its
// own) from the 1EdTech specifications alone: the Security Framework's
// third-party initiated login and id_token, and the Assignment and Grade
// Services' token endpoint and score service. internal/kinds/lti's
// TestJosePlatform runs it against our tool role.
//
// It speaks JSON lines: on stdout {"event":"listening","port":N} once it
// listens on 127.0.0.1, then one answer per command read on stdin:
//   {"cmd":"setup", tool: {login_url, launch_url, jwks_url}, client_id,
//    deployment_id}                                   -> {"event":"ready"}
//   {"cmd":"launch", sub, custom}                     -> {"event":"launched", status, location, error}
//   {"cmd":"rotate"}                                  -> {"event":"rotated", kid}
//   {"cmd":"scores"}                                  -> {"event":"scores", scores: [...], refused: [...]}
// It stops when stdin closes.
import http from 'node:http'
import readline from 'node:readline'
import { randomUUID } from 'node:crypto'
import { SignJWT, generateKeyPair, exportJWK, createRemoteJWKSet, jwtVerify } from 'jose'

const claims = 'https://purl.imsglobal.org/spec/lti/claim/'
const scoreScope = 'https://purl.imsglobal.org/spec/lti-ags/scope/score'
let origin = ''
let tool = null
const keys = [] // {kid, privateKey, jwk}, the newest last
const logins = new Map() // login_hint -> {sub, custom}
const tokens = new Set()
const scores = []
const refused = []

function report (event) {
  process.stdout.write(JSON.stringify(event) + '\n')
}

async function addKey () {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { modulusLength: 2048 })
  const kid = 'key-' + (keys.length + 1)
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }
  keys.push({ kid, privateKey, jwk })
  return kid
}

function body (req) {
  return new Promise((resolve, reject) => {
    let data = ''
    req.on('data', chunk => { data += chunk })
    req.on('end', () => resolve(data))
    req.on('error', reject)
  })
}

function answer (res, status, json) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
  res.end(JSON.stringify(json))
}

// The id_token of a resource link launch (LTI Core 1.3, section 5).
async function idToken (login, nonce) {
  const key = keys[keys.length - 1]
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({
    nonce,
    given_name: 'Grace',
    family_name: 'Hopper',
    [claims + 'message_type']: 'LtiResourceLinkRequest',
    [claims + 'version']: '1.3.0',
    [claims + 'deployment_id']: tool.deployment_id,
    [claims + 'target_link_uri']: tool.launch_url,
    [claims + 'resource_link']: { id: 'link-' + login.sub },
    [claims + 'roles']: ['http://purl.imsglobal.org/vocab/lis/v2/membership#Learner'],
    [claims + 'context']: { id: 'context-1' },
    [claims + 'custom']: login.custom || {},
    'https://purl.imsglobal.org/spec/lti-ags/claim/endpoint': {
      scope: [scoreScope],
      lineitem: origin + '/lineitems/' + encodeURIComponent(login.sub)
    }
  })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
    .setIssuer(origin)
    .setSubject(login.sub)
    .setAudience(tool.client_id)
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(key.privateKey)
}

// A launch as the learner's browser makes it: the third-party initiated
// login at the tool, whose redirect is our authentication request,
// answered by posting the id_token to the redirect_uri.
async function launch (cmd) {
  const hint = randomUUID()
  logins.set(hint, { sub: cmd.sub, custom: cmd.custom })
  const login = new URL(tool.login_url)
  login.search = new URLSearchParams({
    iss: origin, login_hint: hint, target_link_uri: tool.launch_url, client_id: tool.client_id,
    lti_deployment_id: tool.deployment_id
  }).toString()
  const first = await fetch(login, { redirect: 'manual' })
  const auth = new URL(first.headers.get('location') || '', origin)
  const q = auth.searchParams
  const problems = []
  if (first.status !== 302 && first.status !== 303) problems.push('login answered ' + first.status)
  if (auth.origin + auth.pathname !== origin + '/auth') problems.push('redirect to ' + auth)
  if (q.get('scope') !== 'openid') problems.push('scope')
  if (q.get('response_type') !== 'id_token') problems.push('response_type')
  if (q.get('response_mode') !== 'form_post') problems.push('response_mode')
  if (q.get('prompt') !== 'none') problems.push('prompt')
  if (q.get('client_id') !== tool.client_id) problems.push('client_id')
  if (q.get('redirect_uri') !== tool.launch_url) problems.push('redirect_uri')
  if (q.get('login_hint') !== hint) problems.push('login_hint')
  if (!q.get('nonce') || !q.get('state')) problems.push('nonce and state')
  if (problems.length) return { event: 'launched', error: problems.join(', ') }
  const token = await idToken(logins.get(hint), q.get('nonce'))
  logins.delete(hint)
  const post = await fetch(q.get('redirect_uri'), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ id_token: token, state: q.get('state') }).toString()
  })
  return { event: 'launched', status: post.status, location: post.headers.get('location'), body: await post.text() }
}

// The token endpoint: client credentials with a JWT client assertion
// (RFC 7523) signed with the tool's key from its key set.
async function issueToken (req, res) {
  const form = new URLSearchParams(await body(req))
  if (form.get('grant_type') !== 'client_credentials' ||
      form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') {
    return answer(res, 400, { error: 'invalid_request' })
  }
  try {
    const { payload } = await jwtVerify(form.get('client_assertion'), createRemoteJWKSet(new URL(tool.jwks_url)), {
      issuer: tool.client_id, subject: tool.client_id, audience: origin + '/token', algorithms: ['RS256']
    })
    if (!payload.jti) throw new Error('no jti')
  } catch (err) {
    refused.push('assertion: ' + err.message)
    return answer(res, 401, { error: 'invalid_client' })
  }
  const asked = (form.get('scope') || '').split(' ')
  if (!asked.includes(scoreScope)) return answer(res, 400, { error: 'invalid_scope' })
  const token = randomUUID()
  tokens.add(token)
  return answer(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600, scope: scoreScope })
}

const activity = ['Initialized', 'Started', 'InProgress', 'Submitted', 'Completed']
const grading = ['FullyGraded', 'Pending', 'PendingManual', 'Failed', 'NotReady']

// The score service (AGS 2.0): a score of the score media type, by the
// Score rules.
async function takeScore (req, res, lineitem) {
  const bearer = (req.headers.authorization || '').replace(/^Bearer /, '')
  if (!tokens.has(bearer)) return answer(res, 401, { error: 'invalid_token' })
  if (req.headers['content-type'] !== 'application/vnd.ims.lis.v1.score+json') return answer(res, 415, {})
  let score
  try { score = JSON.parse(await body(req)) } catch { return answer(res, 400, { error: 'not JSON' }) }
  const problems = []
  if (!score.userId) problems.push('userId')
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+(Z|[+-]\d{2}:\d{2})$/.test(score.timestamp || '')) problems.push('timestamp')
  if (!activity.includes(score.activityProgress)) problems.push('activityProgress')
  if (!grading.includes(score.gradingProgress)) problems.push('gradingProgress')
  if (score.scoreGiven !== undefined && score.scoreMaximum === undefined) problems.push('scoreMaximum')
  if (problems.length) {
    refused.push('score: ' + problems.join(', '))
    return answer(res, 400, { error: problems.join(', ') })
  }
  scores.push({ lineitem, score })
  res.writeHead(204)
  res.end()
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, origin)
    if (req.method === 'GET' && url.pathname === '/jwks') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300' })
      return res.end(JSON.stringify({ keys: keys.map(k => k.jwk) }))
    }
    if (req.method === 'POST' && url.pathname === '/token') return await issueToken(req, res)
    const m = url.pathname.match(/^\/lineitems\/([^/]+)\/scores$/)
    if (req.method === 'POST' && m) return await takeScore(req, res, decodeURIComponent(m[1]))
    answer(res, 404, { error: 'not found' })
  } catch (err) {
    answer(res, 500, { error: err.message })
  }
})

async function main () {
  await addKey()
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  origin = 'http://127.0.0.1:' + server.address().port
  report({ event: 'listening', port: server.address().port })
  const lines = readline.createInterface({ input: process.stdin })
  for await (const line of lines) {
    if (!line.trim()) continue
    const cmd = JSON.parse(line)
    try {
      if (cmd.cmd === 'setup') {
        tool = { ...cmd.tool, client_id: cmd.client_id, deployment_id: cmd.deployment_id }
        report({ event: 'ready' })
      } else if (cmd.cmd === 'launch') {
        report(await launch(cmd))
      } else if (cmd.cmd === 'rotate') {
        const kid = await addKey()
        keys.splice(0, keys.length - 1)
        report({ event: 'rotated', kid })
      } else if (cmd.cmd === 'scores') {
        report({ event: 'scores', scores, refused })
      }
    } catch (err) {
      report({ event: 'error', error: err.message })
    }
  }
  server.closeAllConnections()
  server.close()
  process.exit(0)
}

main().catch(err => {
  report({ event: 'error', error: err.message })
  process.exit(1)
})

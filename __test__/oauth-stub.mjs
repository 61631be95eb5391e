// A scriptable HTTP stub on 127.0.0.1:0 for the OAuth tests: routes by "METHOD /path", records
// every request (method, path with query, headers, body), 404 for anything else. A route may
// leave the request unanswered (a silent host); `close()` ends every connection.
import { createHash } from 'node:crypto'
import { request as httpRequest, createServer } from 'node:http'
import { connect } from 'node:net'

import { tcpOpen } from './helpers.mjs'

export async function startStub(routes = {}) {
  const requests = []
  const sockets = new Set()
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      // `closed`: the client dropped the connection — the server saw it close, or (where the
      // server does not notice, as Bun 1.3's node:http does not for an unanswered request) the
      // client's end is no longer open in the machine's TCP table.
      let seen = false
      const from = req.socket.remotePort
      const to = server.address().port
      const entry = {
        method: req.method,
        path: req.url,
        headers: req.headers,
        body,
        get closed() {
          return seen || tcpOpen(from, to) === false
        },
      }
      req.socket.once('close', () => {
        seen = true
      })
      requests.push(entry)
      const route = routes[`${req.method} ${req.url.split('?')[0]}`]
      if (!route) {
        res.writeHead(404, { 'Content-Type': 'text/plain' })
        res.end('not found')
        return
      }
      route(entry, res)
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${server.address().port}`
  return {
    base,
    requests,
    /** The requests as "METHOD /path" lines. */
    lines: () => requests.map((r) => `${r.method} ${r.path}`),
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/** Answers with JSON (status 200 unless given). */
export function json(value, status = 200) {
  return (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json' })
    res.end(typeof value === 'string' ? value : JSON.stringify(value))
  }
}

/** Never answers. */
export function silent() {
  return () => {}
}

/** GET `url` with node:http (never through a proxy): `{ status, body, headers }`. */
export function httpGet(url) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'GET', agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => {
        body += chunk
      })
      res.on('end', () => resolve({ status: res.statusCode, body, headers: res.headers }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** True when something accepts connections on 127.0.0.1:`port`. */
export function canConnect(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** The S256 challenge of a PKCE verifier. */
export function s256(verifier) {
  return createHash('sha256').update(verifier).digest('base64url')
}

/**
 * What a browser does after the user approved: GET the authorization URL's `redirect_uri` (its
 * host replaced by 127.0.0.1) with `params`; `state: true` sends the URL's own state.
 */
export function visitCallback(authUrl, params) {
  const auth = new URL(authUrl)
  const callback = new URL(auth.searchParams.get('redirect_uri'))
  callback.hostname = '127.0.0.1'
  for (const [key, value] of Object.entries(params)) {
    callback.searchParams.set(key, value === true ? auth.searchParams.get(key) : value)
  }
  return httpGet(callback)
}

/** The port of the authorization URL's `redirect_uri`. */
export function callbackPort(authUrl) {
  return Number(new URL(new URL(authUrl).searchParams.get('redirect_uri')).port)
}

// SPEC 8.1 / 8.10 (T1–T4) / 8.11: the tool bridge against the fixture server. Runs under vitest
// (Node) and `bun test` (Bun) alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { connectToServer, disconnectServer } from 'mcp-native/compat-12.7/client'
import { createMCPToolName, DeferredMCPTool, MCPTool, parseMCPToolName, ToolAbortError } from 'mcp-native/compat-12.7/tool-bridge'
import { fixture, settle } from './helpers.mjs'

let connection
beforeAll(async () => {
  connection = await connectToServer('gh', fixture([], { killGraceMs: 200 }))
  connection._source = { provider: 'claude', providerName: 'Claude Code', path: '/x', level: 'user' }
})
afterAll(() => disconnectServer(connection))

const reflect = { name: 'reflect', inputSchema: { type: 'object' } }
const requestsOf = async (method) => (await connection.transport.request('requests')).requests.filter((r) => r.method === method)

describe('names (T1, T2)', () => {
  it('createMCPToolName', () => {
    expect(createMCPToolName('puppeteer', 'puppeteer_screenshot')).toBe('mcp_puppeteer_screenshot')
    expect(createMCPToolName('my-server', 'Get-Item')).toBe('mcp_my_server_get_item')
    expect(createMCPToolName('server1', 'tool2')).toBe('mcp_server_tool')
    expect(createMCPToolName('', '')).toBe('mcp_server_tool')
    expect(createMCPToolName('puppeteer', 'puppeteer')).toBe('mcp_puppeteer_puppeteer')
  })

  it('parseMCPToolName', () => {
    expect(parseMCPToolName('mcp_github_create_issue')).toEqual({ serverName: 'github', toolName: 'create_issue' })
    expect(parseMCPToolName('mcp_my_server_list')).toEqual({ serverName: 'my', toolName: 'server_list' })
    expect(parseMCPToolName('mcp__x')).toEqual({ serverName: '', toolName: 'x' })
    expect(parseMCPToolName('mcp_x')).toBeNull()
    expect(parseMCPToolName('github_x')).toBeNull()
  })
})

describe('MCPTool (T3, T4)', () => {
  it('fields, content text and details', async () => {
    const [tool] = MCPTool.fromTools(connection, [{ name: 'search', inputSchema: { type: 'object' } }])
    expect(tool).toBeInstanceOf(MCPTool)
    expect(tool.name).toBe('mcp_gh_search')
    expect(tool.label).toBe('gh/search')
    expect(tool.description).toBe('MCP tool from gh')
    expect(tool.parameters).toEqual({ type: 'object', properties: {} })
    expect(tool.mcpToolName).toBe('search')
    expect(tool.mcpServerName).toBe('gh')
    expect('renderCall' in tool).toBe(false)
    expect('renderResult' in tool).toBe(false)

    const content = [
      { type: 'text', text: 'a' },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'file:///x', text: 'body' } },
      { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
    ]
    const [r] = MCPTool.fromTools(connection, [reflect])
    const out = await r.execute('call-1', { result: { content } }, undefined, {})
    expect(out.content).toEqual([{ type: 'text', text: 'a\n\n[Image: image/png]\n\n[Resource: file:///x]\nbody' }])
    expect(out.details).toEqual({
      serverName: 'gh',
      mcpToolName: 'reflect',
      isError: undefined,
      rawContent: content,
      provider: 'claude',
      providerName: 'Claude Code',
    })
    expect(Object.keys(out.details)).toEqual(['serverName', 'mcpToolName', 'isError', 'rawContent', 'provider', 'providerName'])
    expect('isError' in out.details && out.details.isError === undefined).toBe(true)
  })

  it('a schema with properties is the very object; one with another type is kept as is', () => {
    const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }
    const [a, b] = MCPTool.fromTools(connection, [
      { name: 'a', description: 'A', inputSchema: schema },
      { name: 'b', inputSchema: { type: 'string' } },
    ])
    expect(a.parameters).toBe(schema)
    expect(a.description).toBe('A')
    expect(b.parameters).toEqual({ type: 'string' })
  })

  it('isError, a transport failure, missing content', async () => {
    const [r] = MCPTool.fromTools(connection, [reflect])
    const bad = await r.execute('c', { result: { content: [{ type: 'text', text: 'bad' }], isError: true } }, undefined, {})
    expect(bad.content[0].text).toBe('Error: bad')
    expect(bad.details.isError).toBe(true)

    const [unknown] = MCPTool.fromTools(connection, [{ name: 'nope', inputSchema: { type: 'object' } }])
    const failed = await unknown.execute('c', {}, undefined, {})
    expect(failed.content[0].text).toBe('Error: Unknown tool: nope')

    const missing = await r.execute('c', { result: {} }, undefined, {})
    expect(missing.content[0].text).toMatch(/^MCP error: /)
    expect(missing.details).toEqual({
      serverName: 'gh',
      mcpToolName: 'reflect',
      isError: true,
      provider: 'claude',
      providerName: 'Claude Code',
    })
    expect('rawContent' in missing.details).toBe(false)
  })

  it('a rejected call resolves with MCP error: <message> and no rawContent', async () => {
    const broken = { ...connection, transport: { request: () => Promise.reject(new Error('boom')) } }
    const [t] = MCPTool.fromTools(broken, [reflect])
    const out = await t.execute('c', {}, undefined, {})
    expect(out).toEqual({
      content: [{ type: 'text', text: 'MCP error: boom' }],
      details: { serverName: 'gh', mcpToolName: 'reflect', isError: true, provider: 'claude', providerName: 'Claude Code' },
    })
  })

  it('aborts: before the call (nothing sent), during the call, with a ToolAbortError reason', async () => {
    const [slow] = MCPTool.fromTools(connection, [{ name: 'slow', inputSchema: { type: 'object' } }])
    const before = (await requestsOf('tools/call')).length
    const pre = new AbortController()
    pre.abort()
    const r1 = await settle(slow.execute('c', { ms: 50 }, undefined, {}, pre.signal))
    expect(r1.error).toBeInstanceOf(ToolAbortError)
    expect(r1.error.message).toBe('Operation aborted')
    expect(r1.error.name).toBe('ToolAbortError')
    expect((await requestsOf('tools/call')).length).toBe(before)

    const own = new ToolAbortError('mine')
    const pre2 = new AbortController()
    pre2.abort(own)
    expect((await settle(slow.execute('c', {}, undefined, {}, pre2.signal))).error).toBe(own)

    const during = new AbortController()
    const running = settle(slow.execute('c', { ms: 5000 }, undefined, {}, during.signal))
    setTimeout(() => during.abort(), 50)
    const r2 = await running
    expect(r2.error).toBeInstanceOf(ToolAbortError)
    expect(ToolAbortError.MESSAGE).toBe('Operation aborted')
  })

  it('long tools: progress reaches onUpdate, and keeps the call alive past its timeout', async () => {
    const conn = await connectToServer('long', fixture([], { killGraceMs: 200, timeout: 800 }))
    try {
      const [t] = MCPTool.fromTools(conn, [{ name: 'steps', inputSchema: { type: 'object' } }])
      const updates = []
      const out = await t.execute('c', { steps: 6, intervalMs: 250 }, (u) => updates.push(u), {})
      expect(out.content[0].text).toBe('6 steps')
      expect(updates.map((u) => u.content[0].text)).toEqual(['1/6', '2/6', '3/6', '4/6', '5/6', '6/6'])
      expect(updates[0].details.serverName).toBe('long')
    } finally {
      await disconnectServer(conn)
    }
  })

  it('render hooks delegate to an injected renderer with the exact arguments', () => {
    const calls = []
    const renderer = {
      renderCall: (...args) => {
        calls.push(['call', ...args])
        return 'C'
      },
      renderResult: (...args) => {
        calls.push(['result', ...args])
        return 'R'
      },
    }
    const [t] = MCPTool.fromTools(connection, [reflect], { renderer })
    expect(t.renderCall(undefined, 'theme')).toBe('C')
    expect(t.renderCall({ a: 1 }, 'theme')).toBe('C')
    expect(t.renderResult('res', { expanded: true, isPartial: false }, 'theme')).toBe('R')
    expect(t.renderResult('res', 'opts', 'theme', { q: 1 })).toBe('R')
    expect(calls).toEqual([
      ['call', {}, 'theme', 'gh/reflect'],
      ['call', { a: 1 }, 'theme', 'gh/reflect'],
      ['result', 'res', { expanded: true, isPartial: false }, 'theme', {}],
      ['result', 'res', 'opts', 'theme', { q: 1 }],
    ])
  })
})

describe('DeferredMCPTool', () => {
  const source = { provider: 'cursor', providerName: 'Cursor' }

  it('does not connect until it runs; then uses the connection and its source', async () => {
    let asked = 0
    const tools = DeferredMCPTool.fromTools(
      'gh',
      [reflect],
      async () => {
        asked++
        return connection
      },
      source,
    )
    expect(tools[0]).toBeInstanceOf(DeferredMCPTool)
    expect(tools[0].name).toBe('mcp_gh_reflect')
    expect(asked).toBe(0)
    const out = await tools[0].execute('c', { result: { content: [{ type: 'text', text: 'ok' }] } }, undefined, {})
    expect(asked).toBe(1)
    expect(out.details.provider).toBe('claude') // the connection's source wins
  })

  it('falls back to its own source; errors take provider values only from it', async () => {
    const bare = { ...connection, _source: undefined }
    const [t] = DeferredMCPTool.fromTools('gh', [reflect], async () => bare, source)
    const ok = await t.execute('c', { result: { content: [] } }, undefined, {})
    expect(ok.details.provider).toBe('cursor')
    const [f] = DeferredMCPTool.fromTools(
      'gh',
      [reflect],
      async () => {
        throw new Error('MCP server not connected: gh')
      },
      source,
    )
    const failed = await f.execute('c', {}, undefined, {})
    expect(failed).toEqual({
      content: [{ type: 'text', text: 'MCP error: MCP server not connected: gh' }],
      details: { serverName: 'gh', mcpToolName: 'reflect', isError: true, provider: 'cursor', providerName: 'Cursor' },
    })
  })

  it('an abort while waiting for the connection throws ToolAbortError and leaves no listener', async () => {
    const { getEventListeners } = await import('node:events')
    const [t] = DeferredMCPTool.fromTools('gh', [reflect], () => new Promise(() => {}), source)
    const c = new AbortController()
    const running = settle(t.execute('c', {}, undefined, {}, c.signal))
    await new Promise((r) => setTimeout(r, 20))
    c.abort(new Error('turn ended'))
    expect((await running).error).toBeInstanceOf(ToolAbortError)
    expect(getEventListeners(c.signal, 'abort').length).toBe(0)
  })
})

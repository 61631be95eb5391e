// The bench's chart, hand-written SVG (no dependencies): per workload one bar per runtime, the
// package's speed relative to that runtime's floor client (rate ratio; for times, floor time ÷
// package time), higher is better, a dashed line at 1.0. With several runs, each run is a dot.

const COLORS = { node: '#3c873a', bun: '#c9703a' }
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** `bars`: [{ runtime, label, speed, values }]; `doc`: { date, mode, runs, machine }. */
export function chart(bars, doc) {
  const labels = [...new Set(bars.map((b) => b.label))]
  const runtimes = [...new Set(bars.map((b) => b.runtime))]
  const finite = bars.flatMap((b) => [b.speed, ...b.values]).filter((v) => Number.isFinite(v))
  const xmax = Math.max(2, Math.ceil(Math.max(...finite) * 1.15 * 2) / 2)
  const left = 190
  const plotW = 520
  const barH = 13
  const rowH = runtimes.length * barH + 14
  const top = 78
  const height = top + labels.length * rowH + 46
  const width = left + plotW + 70
  const x = (v) => left + (Math.min(v, xmax) / xmax) * plotW
  const out = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="600">mcp-native ÷ the runtime's plain client (floor): higher is better</text>`,
    `<text x="12" y="40" fill="#555">${esc(
      `${doc.mode} mode, ${doc.runs > 1 ? `median of ${doc.runs} runs (dots: each run)` : 'one run'}, medians of alternating rounds; ${doc.date.slice(0, 16).replace('T', ' ')} UTC${doc.loadAverage ? `; load average ${doc.loadAverage.map((l) => l.toFixed(1)).join(' → ')}` : ''}`,
    )}</text>`,
    `<text x="12" y="56" fill="#555">${esc(
      `${doc.machine.cpus}, ${doc.machine.memoryGiB} GiB, ${doc.machine.os}; Node ${doc.machine.node}${doc.machine.bun ? `, Bun ${doc.machine.bun}` : ''}`,
    )}</text>`,
  )
  // grid and axis
  for (let v = 0; v <= xmax + 1e-9; v += xmax > 4 ? 1 : 0.5) {
    out.push(`<line x1="${x(v)}" y1="${top - 6}" x2="${x(v)}" y2="${top + labels.length * rowH}" stroke="#eee"/>`)
    out.push(`<text x="${x(v)}" y="${top + labels.length * rowH + 16}" text-anchor="middle" fill="#555">${v.toFixed(1)}×</text>`)
  }
  labels.forEach((label, i) => {
    const y0 = top + i * rowH
    out.push(`<text x="${left - 8}" y="${y0 + (runtimes.length * barH) / 2 + 4}" text-anchor="end">${esc(label)}</text>`)
    runtimes.forEach((rt, j) => {
      const b = bars.find((e) => e.label === label && e.runtime === rt)
      if (!b || !Number.isFinite(b.speed)) return
      const y = y0 + j * barH
      out.push(`<rect x="${left}" y="${y}" width="${Math.max(1, x(b.speed) - left)}" height="${barH - 2}" fill="${COLORS[rt] ?? '#888'}"/>`)
      if (b.values.length > 1)
        for (const v of b.values)
          if (Number.isFinite(v)) out.push(`<circle cx="${x(v)}" cy="${y + (barH - 2) / 2}" r="2.2" fill="#222" fill-opacity="0.55"/>`)
      out.push(
        `<text x="${x(Math.max(b.speed, ...b.values.filter((v) => Number.isFinite(v)))) + 5}" y="${y + barH - 3}" font-size="11" fill="#333">${b.speed.toFixed(2)}${b.speed > xmax ? ' →' : ''}</text>`,
      )
    })
  })
  out.push(
    `<line x1="${x(1)}" y1="${top - 10}" x2="${x(1)}" y2="${top + labels.length * rowH}" stroke="#c00" stroke-dasharray="4 3" stroke-width="1.5"/>`,
    `<text x="${x(1) + 3}" y="${top - 12}" fill="#c00" font-size="11">1.0 = floor</text>`,
  )
  let lx = left
  for (const rt of runtimes) {
    out.push(`<rect x="${lx}" y="${height - 18}" width="12" height="10" fill="${COLORS[rt] ?? '#888'}"/>`)
    out.push(
      `<text x="${lx + 16}" y="${height - 9}">${rt === 'node' ? 'Node (floor: child_process / node:http)' : 'Bun (floor: Bun.spawn / fetch)'}</text>`,
    )
    lx += 250
  }
  out.push('</svg>')
  return `${out.join('\n')}\n`
}

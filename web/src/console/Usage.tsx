// Usage: segments, messages, MMS, voice minutes and verifications per account and day, with a
// chart and a CSV export (the same report as GET /usage and `switchboard usage`).
import { useState } from 'preact/hooks'
import type { ProjectProps } from './App'
import type { Page } from './api'
import { api, prj, pub, query } from './api'
import { Card, ErrorText, PageHeader, Table, useLoad, val } from './kit'

interface Day {
  date: string
  account_id: string
  sms_outbound: number
  segments_outbound: number
  sms_inbound: number
  segments_inbound: number
  mms_outbound: number
  mms_inbound: number
  voice_minutes: number
  verifications: number
}

const iso = (d: Date) => d.toISOString().slice(0, 10)

export function UsagePage({ project }: ProjectProps) {
  const today = new Date()
  const [from, setFrom] = useState(iso(new Date(today.getTime() - 29 * 86400e3)))
  const [to, setTo] = useState(iso(today))
  const [account, setAccount] = useState('')
  const accounts = useLoad(() => api.get<Page<{ id: string; name: string }>>(pub(project, '/accounts?limit=100')), [project])
  const params = { from, to, account_id: account }
  const usage = useLoad(() => api.get<{ from: string; to: string; data: Day[] }>(prj(project, '/usage' + query(params))), [project, from, to, account])
  const names = new Map((accounts.data?.data || []).map((a) => [a.id, a.name]))
  const days = usage.data?.data || []
  const sum = (k: keyof Day) => days.reduce((n, d) => n + (d[k] as number), 0)
  const totals: [string, number, string][] = [
    ['Segments sent', sum('segments_outbound'), `${sum('sms_outbound')} SMS`],
    ['Segments received', sum('segments_inbound'), `${sum('sms_inbound')} SMS`],
    ['MMS', sum('mms_outbound') + sum('mms_inbound'), `${sum('mms_outbound')} sent, ${sum('mms_inbound')} received`],
    ['Voice minutes', sum('voice_minutes'), 'rounded up per call'],
    ['Verifications', sum('verifications'), 'codes sent'],
  ]
  return (
    <div class="cx-page">
      <PageHeader
        title="Usage"
        subtitle="Billable usage per account and day (UTC). Segments are the 140-byte billing unit of SMS."
        actions={
          <a class="cx-btn cx-btn-secondary" href={'/console/api' + prj(project, '/usage' + query({ ...params, format: 'csv' }))} download data-testid="usage-csv">
            Export CSV
          </a>
        }
      />
      <Card flush>
        <div class="cx-filters">
          <label class="cx-inline-label">
            From <input class="cx-input cx-input-sm" type="date" value={from} max={to} onChange={(e) => setFrom(val(e))} />
          </label>
          <label class="cx-inline-label">
            To <input class="cx-input cx-input-sm" type="date" value={to} min={from} onChange={(e) => setTo(val(e))} />
          </label>
          <select class="cx-input cx-input-sm" value={account} onChange={(e) => setAccount(val(e))} aria-label="Account">
            <option value="">All accounts</option>
            {accounts.data?.data.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </div>
        <ErrorText error={usage.error} />
        <div class="cx-stats">
          {totals.map(([label, n, sub]) => (
            <div class="cx-stat" key={label} data-stat={label}>
              <div class="cx-stat-label">{label}</div>
              <div class="cx-stat-value">{n.toLocaleString()}</div>
              <div class="cx-faint cx-small">{sub}</div>
            </div>
          ))}
        </div>
        <Chart from={from} to={to} days={days} />
      </Card>
      <Card title="By account and day" flush>
        <Table
          head={['Day', 'Account', 'SMS sent', 'Segments sent', 'SMS received', 'Segments received', 'MMS', 'Voice min', 'Verifications']}
          empty="No usage in this period."
        >
          {days.map((d) => (
            <tr key={d.date + d.account_id} data-usage-row={d.account_id}>
              <td class="cx-nowrap">{d.date}</td>
              <td>{names.get(d.account_id) || d.account_id}</td>
              <td class="cx-num">{d.sms_outbound}</td>
              <td class="cx-num" data-testid="segments-outbound">
                {d.segments_outbound}
              </td>
              <td class="cx-num">{d.sms_inbound}</td>
              <td class="cx-num">{d.segments_inbound}</td>
              <td class="cx-num">{d.mms_outbound + d.mms_inbound}</td>
              <td class="cx-num">{d.voice_minutes}</td>
              <td class="cx-num">{d.verifications}</td>
            </tr>
          ))}
        </Table>
      </Card>
    </div>
  )
}

/** Segments sent and received per day, as bars. */
function Chart({ from, to, days }: { from: string; to: string; days: Day[] }) {
  const byDay = new Map<string, { out: number; in: number }>()
  for (let t = new Date(from + 'T00:00:00Z'); iso(t) <= to && byDay.size < 400; t = new Date(t.getTime() + 86400e3)) byDay.set(iso(t), { out: 0, in: 0 })
  for (const d of days) {
    const v = byDay.get(d.date)
    if (v) {
      v.out += d.segments_outbound
      v.in += d.segments_inbound
    }
  }
  const entries = [...byDay.entries()]
  const max = Math.max(1, ...entries.map(([, v]) => v.out + v.in))
  const w = 860
  const h = 180
  const bw = w / Math.max(1, entries.length)
  return (
    <figure class="cx-chart">
      <svg viewBox={`0 0 ${w} ${h + 22}`} role="img" aria-label="Segments per day">
        {[0.5, 1].map((f) => (
          <line key={f} x1={0} x2={w} y1={h - h * f} y2={h - h * f} class="cx-gridline" />
        ))}
        {entries.map(([day, v], i) => {
          const ho = (v.out / max) * h
          const hi = (v.in / max) * h
          return (
            <g key={day}>
              <title>{`${day}: ${v.out} segments sent, ${v.in} received`}</title>
              <rect x={i * bw + bw * 0.15} width={bw * 0.7} y={h - ho} height={ho} class="cx-bar-out" />
              <rect x={i * bw + bw * 0.15} width={bw * 0.7} y={h - ho - hi} height={hi} class="cx-bar-in" />
              {(i === 0 || i === entries.length - 1 || i % Math.ceil(entries.length / 6) === 0) && (
                <text x={i * bw + bw / 2} y={h + 16} class="cx-axis" text-anchor="middle">
                  {day.slice(5)}
                </text>
              )}
            </g>
          )
        })}
        <text x={4} y={12} class="cx-axis">
          {max.toLocaleString()}
        </text>
      </svg>
      <figcaption>
        <span class="cx-key cx-key-out" /> segments sent <span class="cx-key cx-key-in" /> segments received
      </figcaption>
    </figure>
  )
}

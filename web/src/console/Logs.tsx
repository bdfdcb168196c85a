// The API log: every request made with the project's keys, newest first, filtered by status,
// path, key and time, paged over the cursors; a request's detail.
import { useState } from 'preact/hooks'
import type { ProjectProps } from './App'
import type { Page } from './api'
import { api, prj, query } from './api'
import type { Key } from './Keys'
import { Card, ErrorText, HTTPStatus, Modal, Mono, PageHeader, Pager, Table, When, useLoad, val } from './kit'
import { navigate } from './router'

interface Log {
  id: string
  request_id: string
  key_id: string
  method: string
  path: string
  query: string
  status: number
  error_type: string
  duration_ms: number
  ip: string
  user_agent: string
  created_at: string
}

const filters = ['status', 'path', 'key_id', 'from', 'to'] as const

export function LogsPage({ project, query: q }: ProjectProps) {
  const f = Object.fromEntries(filters.map((k) => [k, q.get(k) || ''])) as Record<(typeof filters)[number], string>
  const cursor = { after: q.get('after') || '', before: q.get('before') || '' }
  const keys = useLoad(() => api.get<Page<Key>>(prj(project, '/keys')), [project])
  const toISO = (local: string) => (local ? new Date(local).toISOString() : '')
  const logs = useLoad(
    () => api.get<Page<Log>>(prj(project, '/logs' + query({ ...f, from: toISO(f.from), to: toISO(f.to), ...cursor, limit: 25 }))),
    [project, q.toString()],
  )
  const [open, setOpen] = useState<Log | null>(null)
  const go = (changes: Record<string, string>) => {
    const next = new URLSearchParams(q)
    for (const [k, v] of Object.entries(changes)) v ? next.set(k, v) : next.delete(k)
    if (!('after' in changes) && !('before' in changes)) {
      next.delete('after')
      next.delete('before')
    }
    const s = next.toString()
    navigate(`/console/p/${project}/logs${s ? '?' + s : ''}`)
  }
  const hints = new Map((keys.data?.data || []).map((k) => [k.id, k.hint]))
  return (
    <div class="cx-page">
      <PageHeader title="API logs" subtitle="Every request made with this project's API keys, newest first." />
      <Card flush>
        <form class="cx-filters" onSubmit={(e) => e.preventDefault()}>
          <select class="cx-input cx-input-sm" value={f.status} onChange={(e) => go({ status: val(e) })} aria-label="Status" data-testid="filter-status">
            <option value="">Any status</option>
            <option value="2xx">2xx success</option>
            <option value="4xx">4xx refused</option>
            <option value="5xx">5xx failed</option>
          </select>
          <input
            class="cx-input cx-input-sm"
            placeholder="Path contains…"
            value={f.path}
            aria-label="Path"
            data-testid="filter-path"
            onChange={(e) => go({ path: val(e) })}
          />
          <select class="cx-input cx-input-sm" value={f.key_id} onChange={(e) => go({ key_id: val(e) })} aria-label="Key">
            <option value="">Any key</option>
            {keys.data?.data.map((k) => (
              <option key={k.id} value={k.id}>
                {k.hint}
              </option>
            ))}
          </select>
          <label class="cx-inline-label">
            From <input class="cx-input cx-input-sm" type="datetime-local" value={f.from} onChange={(e) => go({ from: val(e) })} />
          </label>
          <label class="cx-inline-label">
            To <input class="cx-input cx-input-sm" type="datetime-local" value={f.to} onChange={(e) => go({ to: val(e) })} />
          </label>
          {filters.some((k) => f[k]) && (
            <button type="button" class="cx-btn cx-btn-ghost" onClick={() => navigate(`/console/p/${project}/logs`)}>
              Clear
            </button>
          )}
        </form>
        <ErrorText error={logs.error} />
        <Table head={['Time', 'Request', 'Status', 'Duration', 'Key']} empty="No requests match.">
          {logs.data?.data.map((l) => (
            <tr key={l.id} class="cx-clickable" data-log={l.id} onClick={() => setOpen(l)}>
              <td class="cx-nowrap">
                <When iso={l.created_at} />
              </td>
              <td class="cx-ellipsis">
                <span class="cx-method">{l.method}</span> <Mono>{l.path}</Mono>
                {l.query && <span class="cx-faint">?{l.query}</span>}
              </td>
              <td>
                <HTTPStatus code={l.status} /> {l.error_type && <span class="cx-faint cx-small">{l.error_type}</span>}
              </td>
              <td class="cx-num">{l.duration_ms.toFixed(1)} ms</td>
              <td>
                <Mono>{hints.get(l.key_id) || l.key_id}</Mono>
              </td>
            </tr>
          ))}
        </Table>
        <Pager
          prev={!!logs.data?.pagination.previous_cursor}
          next={!!logs.data?.pagination.next_cursor}
          onPrev={() => go({ before: logs.data?.pagination.previous_cursor || '', after: '' })}
          onNext={() => go({ after: logs.data?.pagination.next_cursor || '', before: '' })}
        />
      </Card>
      {open && (
        <Modal title={`${open.method} ${open.path}`} onClose={() => setOpen(null)}>
          <dl class="cx-dl">
            <dt>Time</dt>
            <dd>
              <When iso={open.created_at} />
            </dd>
            <dt>Status</dt>
            <dd>
              <HTTPStatus code={open.status} /> {open.error_type && <Mono>{open.error_type}</Mono>}
            </dd>
            <dt>Duration</dt>
            <dd>{open.duration_ms.toFixed(2)} ms</dd>
            <dt>Query</dt>
            <dd>
              <Mono>{open.query || '—'}</Mono>
            </dd>
            <dt>API key</dt>
            <dd>
              <Mono>{hints.get(open.key_id) || ''}</Mono> <span class="cx-faint">{open.key_id}</span>
            </dd>
            <dt>Request id</dt>
            <dd>
              <Mono>{open.request_id}</Mono>
            </dd>
            <dt>Client</dt>
            <dd>
              {open.ip} <span class="cx-faint">{open.user_agent}</span>
            </dd>
          </dl>
        </Modal>
      )}
    </div>
  )
}

// The audit log: every change made to the project, from the console or the command line.
import type { ProjectProps } from './App'
import type { Page } from './api'
import { api, prj, query } from './api'
import { Badge, Card, ErrorText, Mono, PageHeader, Pager, Table, When, useLoad } from './kit'
import { navigate } from './router'

interface Entry {
  id: string
  actor_email: string
  action: string
  target: string
  detail: Record<string, unknown>
  via: 'console' | 'cli'
  ip: string
  user_agent: string
  created_at: string
}

/** The particulars of an entry as key: value text. */
function details(d: Record<string, unknown>): string {
  return Object.entries(d)
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${Array.isArray(v) ? v.join(', ') || 'all' : String(v)}`)
    .join(' · ')
}

export function AuditPage({ project, query: q }: ProjectProps) {
  const cursor = { after: q.get('after') || '', before: q.get('before') || '' }
  const entries = useLoad(() => api.get<Page<Entry>>(prj(project, '/audit' + query({ ...cursor, limit: 50 }))), [project, q.toString()])
  return (
    <div class="cx-page">
      <PageHeader title="Audit log" subtitle="Who changed what, when, and from where: in the console and on the command line." />
      <ErrorText error={entries.error} />
      <Card flush>
        <Table head={['Time', 'Who', 'What', 'Details', 'From']}>
          {entries.data?.data.map((e) => (
            <tr key={e.id}>
              <td class="cx-nowrap">
                <When iso={e.created_at} />
              </td>
              <td>{e.actor_email}</td>
              <td>
                <Mono>{e.action}</Mono>
                <div class="cx-faint cx-small">{e.target}</div>
              </td>
              <td class="cx-wrap cx-small">{details(e.detail)}</td>
              <td class="cx-small">
                <Badge tone={e.via === 'cli' ? 'muted' : 'info'}>{e.via}</Badge> {e.ip}
                <div class="cx-faint cx-ellipsis" title={e.user_agent}>
                  {e.user_agent}
                </div>
              </td>
            </tr>
          ))}
        </Table>
        <Pager
          prev={!!entries.data?.pagination.previous_cursor}
          next={!!entries.data?.pagination.next_cursor}
          onPrev={() => navigate(`/console/p/${project}/audit?before=${entries.data?.pagination.previous_cursor}`)}
          onNext={() => navigate(`/console/p/${project}/audit?after=${entries.data?.pagination.next_cursor}`)}
        />
      </Card>
    </div>
  )
}

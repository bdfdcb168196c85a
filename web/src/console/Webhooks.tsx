// Webhook endpoints (create, events, disable/enable, rotate the secret, send a test event) and the
// delivery log (status, attempts, the endpoint's answer as text; replay one or the failures since
// a time).
import { useEffect, useState } from 'preact/hooks'
import type { ProjectProps } from './App'
import type { Page } from './api'
import { api, canDo, prj, query } from './api'
import { Action, Badge, Card, ErrorText, Field, Modal, Mono, PageHeader, Secret, Status, Table, When, useAction, useLoad, val } from './kit'

interface Endpoint {
  id: string
  url: string
  events: string[]
  enabled: boolean
  disabled_reason: string | null
  failing_since: string | null
  previous_secret_valid_until: string | null
  created_at: string
  secret?: string
}

interface Delivery {
  id: string
  endpoint_id: string
  event_id: string
  event_type: string
  status: string
  attempts: number
  last_status: number | null
  last_error: string | null
  next_attempt_at: string | null
  delivered_at: string | null
  created_at: string
}

export function WebhooksPage({ project, role }: ProjectProps) {
  const endpoints = useLoad(() => api.get<Page<Endpoint> & { event_types: string[] }>(prj(project, '/webhooks')), [project])
  const [status, setStatus] = useState('')
  const deliveries = useLoad(() => api.get<Page<Delivery>>(prj(project, '/deliveries' + query({ status, limit: 50 }))), [project, status])
  const [adding, setAdding] = useState(false)
  const [secret, setSecret] = useState<{ title: string; endpoint: Endpoint } | null>(null)
  const [detail, setDetail] = useState<string | null>(null)
  const [since, setSince] = useState(() => new Date(Date.now() - 24 * 3600e3).toISOString().slice(0, 16))
  const act = useAction()
  const urls = new Map((endpoints.data?.data || []).map((e) => [e.id, e.url]))

  // Deliveries move on their own (retries, a test event): the log follows while the page is open.
  useEffect(() => {
    const t = setInterval(deliveries.reload, 3000)
    return () => clearInterval(t)
  }, [project, status])

  const change = (fn: () => Promise<unknown>) => act.run(fn).then(() => {
    endpoints.reload()
    deliveries.reload()
  })

  return (
    <div class="cx-page">
      <PageHeader
        title="Webhooks"
        subtitle="Switchboard POSTs each event to your endpoints, signed with Standard Webhooks, and retries for about 27 hours."
        actions={
          <Action role={role} onClick={() => setAdding(true)} testid="add-endpoint">
            Add endpoint
          </Action>
        }
      />
      <ErrorText error={endpoints.error || act.error} />
      <Card title="Endpoints" flush>
        <Table head={['Endpoint', 'Events', 'Status', 'Created', '']} empty="No endpoints: add one to receive events.">
          {endpoints.data?.data.map((e) => (
            <tr key={e.id} data-endpoint={e.id}>
              <td class="cx-wrap">
                <Mono>{e.url}</Mono>
                <div class="cx-faint cx-small">{e.id}</div>
                {e.previous_secret_valid_until && (
                  <div class="cx-small cx-warn-text">
                    Rotated: the previous secret also signs until <When iso={e.previous_secret_valid_until} />
                  </div>
                )}
              </td>
              <td class="cx-wrap">
                {e.events.length ? e.events.map((t) => <span key={t} class="cx-chip">{t}</span>) : <span class="cx-chip">all events</span>}
              </td>
              <td>
                {e.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="danger">disabled</Badge>}
                {e.failing_since && <div class="cx-small cx-warn-text">failing since <When iso={e.failing_since} /></div>}
                {!e.enabled && e.disabled_reason && <div class="cx-small cx-faint">{e.disabled_reason}</div>}
              </td>
              <td>
                <When iso={e.created_at} />
              </td>
              <td class="cx-right cx-nowrap">
                <TestButton role={role} endpoint={e} types={endpoints.data?.event_types || []} onSent={() => setTimeout(deliveries.reload, 600)} project={project} />
                <Action
                  role={role}
                  kind="secondary"
                  testid="rotate-secret"
                  onClick={() => act.run(async () => setSecret({ title: 'New signing secret', endpoint: await api.post(prj(project, `/webhooks/${e.id}/rotate-secret`)) })).then(endpoints.reload)}
                >
                  Rotate secret
                </Action>
                <Action
                  role={role}
                  kind="ghost"
                  onClick={() => act.run(async () => setSecret({ title: 'Signing secret', endpoint: await api.get(prj(project, `/webhooks/${e.id}/secret`)) }))}
                >
                  Reveal
                </Action>
                <Action role={role} kind="ghost" testid="toggle-endpoint" onClick={() => change(() => api.post(prj(project, `/webhooks/${e.id}/${e.enabled ? 'disable' : 'enable'}`)))}>
                  {e.enabled ? 'Disable' : 'Enable'}
                </Action>
              </td>
            </tr>
          ))}
        </Table>
      </Card>

      <Card
        title="Deliveries"
        actions={
          <>
            <select class="cx-input cx-input-sm" value={status} onChange={(e) => setStatus(val(e))} aria-label="Status">
              <option value="">All statuses</option>
              <option value="succeeded">Succeeded</option>
              <option value="pending">Pending</option>
              <option value="failed">Failed</option>
            </select>
            <input class="cx-input cx-input-sm" type="datetime-local" value={since} onInput={(e) => setSince(val(e))} aria-label="Failures since" />
            <Action role={role} kind="secondary" onClick={() => change(() => api.post(prj(project, '/webhooks/replay'), { since: new Date(since).toISOString() }))}>
              Replay failures since
            </Action>
          </>
        }
        flush
      >
        <ErrorText error={deliveries.error} />
        <Table head={['Time', 'Event', 'Endpoint', 'Status', 'Attempts', 'Last answer', '']} empty="No deliveries yet.">
          {deliveries.data?.data.map((d) => (
            <tr key={d.id} data-delivery={d.id} class="cx-clickable" onClick={() => setDetail(d.id)}>
              <td class="cx-nowrap">
                <When iso={d.created_at} />
              </td>
              <td>
                <Mono>{d.event_type}</Mono>
              </td>
              <td class="cx-ellipsis cx-faint" title={urls.get(d.endpoint_id)}>
                {urls.get(d.endpoint_id) || d.endpoint_id}
              </td>
              <td>
                <Status value={d.status} />
              </td>
              <td>{d.attempts}</td>
              <td class="cx-ellipsis" title={d.last_error || ''}>
                {d.last_status ? <Mono>HTTP {d.last_status}</Mono> : null} {d.last_error && <span class="cx-faint">{d.last_error}</span>}
              </td>
              <td class="cx-right" onClick={(e) => e.stopPropagation()}>
                {d.status === 'failed' && (
                  <Action role={role} kind="secondary" onClick={() => change(() => api.post(prj(project, `/deliveries/${d.id}/replay`)))}>
                    Replay
                  </Action>
                )}
              </td>
            </tr>
          ))}
        </Table>
      </Card>

      {adding && <AddEndpoint project={project} types={endpoints.data?.event_types || []} onClose={() => setAdding(false)} onAdded={(e) => {
        setAdding(false)
        setSecret({ title: 'Endpoint added', endpoint: e })
        endpoints.reload()
      }} />}
      {secret && (
        <Modal title={secret.title} onClose={() => setSecret(null)}>
          <p>
            Verify deliveries to <Mono>{secret.endpoint.url}</Mono> with this secret (any Standard Webhooks library).
          </p>
          <Secret value={secret.endpoint.secret || ''} testid="endpoint-secret" />
          {secret.endpoint.previous_secret_valid_until && (
            <p class="cx-small">
              The previous secret keeps signing beside it until <When iso={secret.endpoint.previous_secret_valid_until} />, so your receiver can switch
              without losing a delivery.
            </p>
          )}
        </Modal>
      )}
      {detail && <DeliveryDetail project={project} id={detail} role={role} onClose={() => setDetail(null)} onReplayed={deliveries.reload} />}
    </div>
  )
}

function TestButton({ role, endpoint, types, project, onSent }: { role: ProjectProps['role']; endpoint: Endpoint; types: string[]; project: string; onSent: () => void }) {
  const [open, setOpen] = useState(false)
  const [type, setType] = useState(endpoint.events[0] || 'message.received')
  const act = useAction()
  const choices = endpoint.events.length ? endpoint.events : types
  return (
    <>
      <Action role={role} kind="secondary" testid="send-test" onClick={() => setOpen(true)} disabled={!endpoint.enabled}>
        Send test event
      </Action>
      {open && (
        <Modal
          title="Send a test event"
          onClose={() => setOpen(false)}
          footer={
            <Action
              role={role}
              testid="confirm-test"
              disabled={act.busy}
              onClick={() => act.run(() => api.post(prj(project, `/webhooks/${endpoint.id}/test`), { event_type: type })).then((ok) => {
                if (ok) {
                  setOpen(false)
                  onSent()
                }
              })}
            >
              Send
            </Action>
          }
        >
          <p>
            A signed <Mono>{type}</Mono> event goes to <Mono>{endpoint.url}</Mono> only. Its ids are all zeros (<Mono>acct_000…</Mono>), so your
            receiver can tell it from a real one.
          </p>
          <Field label="Event type">
            <select class="cx-input" value={type} onChange={(e) => setType(val(e))}>
              {choices.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          </Field>
          <ErrorText error={act.error} />
        </Modal>
      )}
    </>
  )
}

function AddEndpoint({ project, types, onClose, onAdded }: { project: string; types: string[]; onClose: () => void; onAdded: (e: Endpoint) => void }) {
  const [url, setURL] = useState('')
  const [all, setAll] = useState(true)
  const [chosen, setChosen] = useState<string[]>([])
  const act = useAction()
  return (
    <Modal
      title="Add a webhook endpoint"
      onClose={onClose}
      footer={
        <button
          type="button"
          class="cx-btn cx-btn-primary"
          data-testid="save-endpoint"
          disabled={act.busy}
          onClick={() => act.run(async () => onAdded(await api.post(prj(project, '/webhooks'), { url, events: all ? [] : chosen })))}
        >
          Add endpoint
        </button>
      }
    >
      <Field label="URL" hint="Where Switchboard POSTs the events. HTTPS in production.">
        <input class="cx-input" name="url" type="url" value={url} placeholder="https://example.com/webhooks/switchboard" onInput={(e) => setURL(val(e))} />
      </Field>
      <label class="cx-check">
        <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} /> Every event type
      </label>
      {!all && (
        <div class="cx-checks">
          {types.map((t) => (
            <label key={t} class="cx-check">
              <input
                type="checkbox"
                checked={chosen.includes(t)}
                onChange={(e) => setChosen(e.currentTarget.checked ? [...chosen, t] : chosen.filter((x) => x !== t))}
              />{' '}
              <Mono>{t}</Mono>
            </label>
          ))}
        </div>
      )}
      <ErrorText error={act.error} />
    </Modal>
  )
}

function DeliveryDetail({ project, id, role, onClose, onReplayed }: { project: string; id: string; role: ProjectProps['role']; onClose: () => void; onReplayed: () => void }) {
  const d = useLoad(() => api.get<Delivery & { endpoint_url: string; payload: string }>(prj(project, `/deliveries/${id}`)), [id])
  const act = useAction()
  let pretty = d.data?.payload || ''
  try {
    pretty = JSON.stringify(JSON.parse(pretty), null, 2)
  } catch {
    /* shown as it is */
  }
  return (
    <Modal
      title="Delivery"
      onClose={onClose}
      footer={
        canDo(role, 'developer') ? (
          <Action role={role} kind="secondary" onClick={() => act.run(() => api.post(prj(project, `/deliveries/${id}/replay`))).then((ok) => ok && (onReplayed(), onClose()))}>
            Deliver again
          </Action>
        ) : undefined
      }
    >
      <ErrorText error={d.error || act.error} />
      {d.data && (
        <dl class="cx-dl">
          <dt>Event</dt>
          <dd>
            <Mono>{d.data.event_type}</Mono> <span class="cx-faint">{d.data.event_id}</span>
          </dd>
          <dt>Endpoint</dt>
          <dd>
            <Mono>{d.data.endpoint_url}</Mono>
          </dd>
          <dt>Status</dt>
          <dd>
            <Status value={d.data.status} /> after {d.data.attempts} attempt{d.data.attempts === 1 ? '' : 's'}
          </dd>
          {d.data.last_error && (
            <>
              <dt>Last answer</dt>
              <dd>
                <pre class="cx-pre">{d.data.last_error}</pre>
              </dd>
            </>
          )}
          {d.data.next_attempt_at && (
            <>
              <dt>Next attempt</dt>
              <dd>
                <When iso={d.data.next_attempt_at} />
              </dd>
            </>
          )}
          <dt>Payload</dt>
          <dd>
            <pre class="cx-pre">{pretty}</pre>
          </dd>
        </dl>
      )}
    </Modal>
  )
}

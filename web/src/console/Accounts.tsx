// Accounts (messaging brands) and everything they hold: organization and readiness, numbers,
// 10DLC campaigns and toll-free verifications (submitted and followed here, decided here with the
// simulated carrier), contacts, conversations (read-only) and blasts with their live progress.
// Everything is read and changed through the public API's operations on the project.
import { useEffect, useRef, useState } from 'preact/hooks'
import { Avatar } from '../ui/components'
import { formatPhone } from '../ui/format'
import { ConversationList, InboxLayout } from '../ui/inbox/List'
import { ConversationPane } from '../ui/inbox/Thread'
import type { Item } from '../ui/inbox/types'
import { inOrder } from '../ui/inbox/types'
import type { ProjectProps } from './App'
import type { Page } from './api'
import { api, canDo, prj, pub, query } from './api'
import { Action, Badge, Card, ErrorText, Field, Modal, Mono, PageHeader, Pager, Status, Table, Tabs, When, useAction, useLoad, val } from './kit'
import { linkProps, navigate } from './router'

interface Account {
  id: string
  name: string
  brand_name: string | null
  organization: Record<string, any> | null
  time_zone: string | null
}

interface PhoneNumber {
  id: string
  number: string
  type: string
  name: string | null
  campaign: { id: string; attachment_status: string } | null
  created_at: string
}

interface ReviewCampaign {
  id: string
  kind: '10dlc' | 'toll_free'
  status: string
  rejection_reason: string | null
  description: string
  use_cases: string[]
  phone_number: string | null
  carrier: string
  created_at: string
  updated_at: string
}

export function AccountsPage({ project, role, query: q }: ProjectProps) {
  const after = q.get('after') || ''
  const before = q.get('before') || ''
  const accounts = useLoad(() => api.get<Page<Account>>(pub(project, '/accounts' + query({ after, before, limit: 25 }))), [project, after, before])
  const [creating, setCreating] = useState(false)
  return (
    <div class="cx-page">
      <PageHeader
        title="Accounts"
        subtitle="Each account is a brand you send for: it holds numbers, campaigns, contacts and conversations."
        actions={
          <Action role={role} onClick={() => setCreating(true)}>
            New account
          </Action>
        }
      />
      <ErrorText error={accounts.error} />
      <Card flush>
        <Table head={['Account', 'Brand', 'Organization', 'Time zone', 'Id']} empty="No accounts yet. Create one here or with POST /accounts.">
          {accounts.data?.data.map((a) => (
            <tr key={a.id} class="cx-clickable" onClick={() => navigate(`/console/p/${project}/accounts/${a.id}`)}>
              <td>
                <a {...linkProps(`/console/p/${project}/accounts/${a.id}`)} class="cx-strong">
                  {a.name}
                </a>
              </td>
              <td>{a.brand_name || <span class="cx-faint">{a.name}</span>}</td>
              <td>{a.organization?.registered_name || <span class="cx-faint">not set</span>}</td>
              <td>{a.time_zone || <span class="cx-faint">—</span>}</td>
              <td>
                <Mono>{a.id}</Mono>
              </td>
            </tr>
          ))}
        </Table>
        <Pager
          prev={!!accounts.data?.pagination.previous_cursor}
          next={!!accounts.data?.pagination.next_cursor}
          onPrev={() => navigate(`/console/p/${project}/accounts?before=${accounts.data?.pagination.previous_cursor}`)}
          onNext={() => navigate(`/console/p/${project}/accounts?after=${accounts.data?.pagination.next_cursor}`)}
        />
      </Card>
      {creating && <NewAccount project={project} onClose={() => setCreating(false)} />}
    </div>
  )
}

function NewAccount({ project, onClose }: { project: string; onClose: () => void }) {
  const [name, setName] = useState('')
  const act = useAction()
  return (
    <Modal
      title="New account"
      onClose={onClose}
      footer={
        <button
          type="button"
          class="cx-btn cx-btn-primary"
          onClick={() => act.run(async () => navigate(`/console/p/${project}/accounts/${(await api.post<Account>(pub(project, '/accounts'), { name })).id}`))}
        >
          Create
        </button>
      }
    >
      <Field label="Name" hint="Also the brand name recipients see, unless you set one.">
        <input class="cx-input" value={name} onInput={(e) => setName(val(e))} placeholder="Acme Dental" />
      </Field>
      <ErrorText error={act.error} />
    </Modal>
  )
}

const tabs = [
  { id: 'overview', label: 'Overview' },
  { id: 'numbers', label: 'Numbers' },
  { id: 'campaigns', label: 'Campaigns' },
  { id: 'contacts', label: 'Contacts' },
  { id: 'conversations', label: 'Conversations' },
  { id: 'blasts', label: 'Blasts' },
]

export function AccountPage(props: ProjectProps & { account: string }) {
  const { project, account, query: q } = props
  const tab = q.get('tab') || 'overview'
  const acct = useLoad(() => api.get<Account>(pub(project, `/accounts/${account}`)), [project, account])
  const review = useLoad(() => api.get<{ archived_at: string | null; campaigns: ReviewCampaign[] }>(prj(project, `/accounts/${account}/review`)), [project, account])
  const archived = !!review.data?.archived_at
  return (
    <div class="cx-page">
      <a class="cx-back" {...linkProps(`/console/p/${project}/accounts`)}>
        ← Accounts
      </a>
      <PageHeader
        title={acct.data?.name || 'Account'}
        subtitle={
          <>
            <Mono>{account}</Mono> {archived && <Badge tone="muted">archived</Badge>}
          </>
        }
      />
      <ErrorText error={acct.error} />
      <Tabs tabs={tabs} active={tab} onChange={(t) => navigate(`/console/p/${project}/accounts/${account}?tab=${t}`)} />
      {tab === 'overview' && acct.data && <Overview {...props} acct={acct.data} archived={archived} onArchived={review.reload} />}
      {tab === 'numbers' && <Numbers {...props} archived={archived} />}
      {tab === 'campaigns' && <Campaigns {...props} campaigns={review.data?.campaigns || []} onChanged={review.reload} archived={archived} />}
      {tab === 'contacts' && <Contacts {...props} />}
      {tab === 'conversations' && <Conversations key={account} {...props} />}
      {tab === 'blasts' && <Blasts {...props} />}
    </div>
  )
}

function Overview({ project, role, account, acct, archived, onArchived }: ProjectProps & { account: string; acct: Account; archived: boolean; onArchived: () => void }) {
  const status = useLoad(() => api.get<{ capabilities: Record<string, { status: string; fields_needed: string[]; errors: { field: string; message: string }[] }> }>(pub(project, `/accounts/${account}/status`)), [account, archived])
  const act = useAction()
  const org = acct.organization || {}
  const rows: [string, unknown][] = [
    ['Brand name', acct.brand_name || acct.name],
    ['Registered name', org.registered_name],
    ['Type', org.type],
    ['Industry', org.industry],
    ['Identifier', org.identifier && `${org.identifier} (${org.identifier_type || 'type not set'})`],
    ['Website', org.website],
    ['Email', org.email],
    ['Address', org.address && [org.address.line1, org.address.line2, org.address.locality, org.address.region, org.address.postal_code, org.address.country].filter(Boolean).join(', ')],
    ['Contact', org.contact && [org.contact.first_name, org.contact.last_name, org.contact.email].filter(Boolean).join(' ')],
    ['Time zone', acct.time_zone],
  ]
  return (
    <div class="cx-grid-2">
      <Card title="Organization">
        <dl class="cx-dl">
          {rows.map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>{v ? String(v) : <span class="cx-faint">not set</span>}</dd>
            </>
          ))}
        </dl>
        <p class="cx-faint cx-small">Set these with PATCH /accounts/{'{id}'} and its organization object.</p>
      </Card>
      <div>
        <Card title="Capabilities">
          <ErrorText error={status.error} />
          {status.data &&
            Object.entries(status.data.capabilities).map(([cap, s]) => (
              <div key={cap} class="cx-capability">
                <div class="cx-row-between">
                  <Mono>{cap}</Mono> <Status value={s.status} />
                </div>
                {s.fields_needed.length > 0 && <div class="cx-small cx-faint">Needs: {s.fields_needed.join(', ')}</div>}
                {s.errors.map((e) => (
                  <div key={e.field} class="cx-small cx-warn-text">
                    {e.field}: {e.message}
                  </div>
                ))}
              </div>
            ))}
        </Card>
        <Card title="Archive">
          {archived ? (
            <p>This account is archived: its numbers were released and it cannot send.</p>
          ) : (
            <>
              <p class="cx-subtitle">Archiving releases the account's numbers, deactivates its campaigns and blocks its sends. It cannot be undone.</p>
              <ErrorText error={act.error} />
              <Action
                role={role}
                kind="danger"
                onClick={() => confirm(`Archive ${acct.name}? This cannot be undone.`) && act.run(() => api.del(pub(project, `/accounts/${account}`))).then(onArchived)}
              >
                Archive account
              </Action>
            </>
          )}
        </Card>
      </div>
    </div>
  )
}

function Numbers({ project, role, account, archived }: ProjectProps & { account: string; archived: boolean }) {
  const numbers = useLoad(() => api.get<Page<PhoneNumber>>(pub(project, `/accounts/${account}/phone_numbers?limit=100`)), [account])
  const [type, setType] = useState('local')
  const [area, setArea] = useState('')
  const act = useAction()
  return (
    <Card
      title="Phone numbers"
      flush
      actions={
        !archived && (
          <>
            <select class="cx-input cx-input-sm" value={type} onChange={(e) => setType(val(e))} aria-label="Type">
              <option value="local">Local</option>
              <option value="toll_free">Toll-free</option>
            </select>
            {type === 'local' && <input class="cx-input cx-input-sm cx-w-area" placeholder="Area code" value={area} onInput={(e) => setArea(val(e))} />}
            <Action
              role={role}
              onClick={() => act.run(() => api.post(pub(project, `/accounts/${account}/phone_numbers`), type === 'local' && area ? { area_code: area } : { type })).then(numbers.reload)}
            >
              Buy a number
            </Action>
          </>
        )
      }
    >
      <ErrorText error={numbers.error || act.error} />
      <Table head={['Number', 'Type', 'Name', 'Campaign', 'Since']} empty="No numbers: buy one to send.">
        {numbers.data?.data.map((n) => (
          <tr key={n.id}>
            <td>
              <span class="cx-strong">{formatPhone(n.number)}</span>
              <div class="cx-faint cx-small">{n.id}</div>
            </td>
            <td>
              <Badge tone="muted">{n.type.replace('_', '-')}</Badge>
            </td>
            <td>{n.name || <span class="cx-faint">—</span>}</td>
            <td>{n.campaign ? <><Mono>{n.campaign.id}</Mono> <Status value={n.campaign.attachment_status} /></> : <span class="cx-faint">—</span>}</td>
            <td>
              <When iso={n.created_at} />
            </td>
          </tr>
        ))}
      </Table>
    </Card>
  )
}

const useCases = ['account_notification', 'customer_care', 'delivery_notification', 'two_factor_authentication', 'fraud_alert', 'security_alert', 'marketing', 'event', 'polling_voting', 'public_service_announcement', 'charity', 'higher_education', 'k12_education', 'political']

function Campaigns({ project, role, me, account, campaigns, onChanged, archived }: ProjectProps & { account: string; campaigns: ReviewCampaign[]; onChanged: () => void; archived: boolean }) {
  const [submitting, setSubmitting] = useState(false)
  const act = useAction()
  // A review under way moves on its own: follow it.
  useEffect(() => {
    if (!campaigns.some((c) => c.status === 'created' || c.status === 'in_review')) return
    const t = setInterval(onChanged, 2000)
    return () => clearInterval(t)
  }, [campaigns.map((c) => c.status).join()])
  const decide = (id: string, verdict: 'approve' | 'reject') => {
    const reason = verdict === 'reject' ? prompt('Rejection reason', 'Sample messages lack opt-out language') : ''
    if (reason === null) return
    act.run(() => api.post(prj(project, '/sim/verdicts'), { id, verdict, reason })).then(onChanged)
  }
  return (
    <Card
      title="Campaigns and toll-free verifications"
      flush
      actions={
        !archived && (
          <Action role={role} onClick={() => setSubmitting(true)} testid="submit-toll-free">
            Verify a toll-free number
          </Action>
        )
      }
    >
      <ErrorText error={act.error} />
      <Table head={['Campaign', 'Kind', 'Number', 'Use cases', 'Status', 'Updated', '']} empty="No campaigns. Register 10DLC campaigns with POST /accounts/{id}/campaigns; verify toll-free numbers here.">
        {campaigns.map((c) => (
          <tr key={c.id} data-campaign={c.id}>
            <td class="cx-wrap">
              <Mono>{c.id}</Mono>
              <div class="cx-small">{c.description}</div>
            </td>
            <td>{c.kind === '10dlc' ? <Badge tone="info">10DLC</Badge> : <Badge tone="info">toll-free</Badge>}</td>
            <td>{c.phone_number ? formatPhone(c.phone_number) : <span class="cx-faint">—</span>}</td>
            <td class="cx-wrap">
              {c.use_cases.map((u) => (
                <span key={u} class="cx-chip">
                  {u.replace(/_/g, ' ')}
                </span>
              ))}
            </td>
            <td data-testid="campaign-status">
              <Status value={c.status} />
              {c.rejection_reason && <div class="cx-small cx-warn-text">{c.rejection_reason}</div>}
            </td>
            <td>
              <When iso={c.updated_at} />
            </td>
            <td class="cx-right cx-nowrap">
              {me.simulated_carrier && c.carrier === 'sim' && c.status === 'in_review' && canDo(role, 'developer') && (
                <>
                  <button type="button" class="cx-btn cx-btn-secondary" onClick={() => decide(c.id, 'approve')} title="The simulated carrier approves it">
                    Approve
                  </button>
                  <button type="button" class="cx-btn cx-btn-ghost" onClick={() => decide(c.id, 'reject')} title="The simulated carrier rejects it">
                    Reject
                  </button>
                </>
              )}
            </td>
          </tr>
        ))}
      </Table>
      {submitting && <TollFreeForm project={project} account={account} onClose={() => setSubmitting(false)} onDone={() => (setSubmitting(false), onChanged())} />}
    </Card>
  )
}

function TollFreeForm({ project, account, onClose, onDone }: { project: string; account: string; onClose: () => void; onDone: () => void }) {
  const numbers = useLoad(() => api.get<Page<PhoneNumber>>(pub(project, `/accounts/${account}/phone_numbers?limit=100`)), [account])
  const tollFree = (numbers.data?.data || []).filter((n) => n.type === 'toll_free')
  const [number, setNumber] = useState('')
  const [cases, setCases] = useState<string[]>(['account_notification'])
  const [description, setDescription] = useState('')
  const [sample, setSample] = useState('')
  const [privacy, setPrivacy] = useState('')
  const [terms, setTerms] = useState('')
  const act = useAction()
  return (
    <Modal
      title="Verify a toll-free number"
      onClose={onClose}
      footer={
        <button
          type="button"
          class="cx-btn cx-btn-primary"
          disabled={act.busy}
          onClick={() =>
            act
              .run(() =>
                api.post(pub(project, `/accounts/${account}/toll_free_campaigns`), {
                  phone_number_id: number || tollFree[0]?.id,
                  use_cases: cases,
                  description,
                  message_samples: sample ? [sample] : [],
                  includes: [],
                  privacy_policy_url: privacy,
                  terms_and_conditions_url: terms,
                }),
              )
              .then((ok) => ok && onDone())
          }
        >
          Submit for verification
        </button>
      }
    >
      <p class="cx-subtitle">Carriers verify a toll-free number before it may send. The verification moves from created to in review to active, or rejected with a reason.</p>
      <Field label="Toll-free number">
        <select class="cx-input" value={number} onChange={(e) => setNumber(val(e))}>
          {tollFree.length === 0 && <option value="">No toll-free number: buy one on the Numbers tab</option>}
          {tollFree.map((n) => (
            <option key={n.id} value={n.id}>
              {formatPhone(n.number)}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Use cases">
        <select class="cx-input" multiple size={5} onChange={(e) => setCases(Array.from(e.currentTarget.selectedOptions, (o) => o.value))}>
          {useCases.map((u) => (
            <option key={u} value={u} selected={cases.includes(u)}>
              {u.replace(/_/g, ' ')}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Description" hint="Who receives the messages and why.">
        <textarea class="cx-input" rows={3} value={description} onInput={(e) => setDescription(val(e))} />
      </Field>
      <Field label="Sample message">
        <input class="cx-input" value={sample} onInput={(e) => setSample(val(e))} placeholder="Acme Dental: your appointment is tomorrow at 10:00. Reply STOP to opt out." />
      </Field>
      <div class="cx-grid-2">
        <Field label="Privacy policy URL">
          <input class="cx-input" value={privacy} onInput={(e) => setPrivacy(val(e))} placeholder="https://" />
        </Field>
        <Field label="Terms and conditions URL">
          <input class="cx-input" value={terms} onInput={(e) => setTerms(val(e))} placeholder="https://" />
        </Field>
      </div>
      <ErrorText error={act.error} />
    </Modal>
  )
}

interface Contact {
  id: string
  phone_number: string
  email: string | null
  first_name: string | null
  last_name: string | null
  opted_out: boolean
  outbound_disabled: boolean
  created_at: string
}

const nameOf = (c: { first_name: string | null; last_name: string | null; phone_number: string }) =>
  [c.first_name, c.last_name].filter(Boolean).join(' ') || formatPhone(c.phone_number)

function Contacts({ project, account, query: q }: ProjectProps & { account: string }) {
  const after = q.get('after') || ''
  const contacts = useLoad(() => api.get<Page<Contact>>(pub(project, `/accounts/${account}/contacts` + query({ after, limit: 50 }))), [account, after])
  return (
    <Card title="Contacts" flush>
      <ErrorText error={contacts.error} />
      <Table head={['Contact', 'Number', 'Email', 'Messaging', 'Since']} empty="No contacts yet: they appear when someone is messaged or messages in.">
        {contacts.data?.data.map((c) => (
          <tr key={c.id}>
            <td>
              <span class="cx-person">
                <Avatar name={nameOf(c)} seed={c.id} size={28} /> {nameOf(c)}
              </span>
            </td>
            <td>{formatPhone(c.phone_number)}</td>
            <td>{c.email || <span class="cx-faint">—</span>}</td>
            <td>
              {c.opted_out ? <Badge tone="danger">opted out</Badge> : c.outbound_disabled ? <Badge tone="warn">outbound disabled</Badge> : <Badge tone="ok">reachable</Badge>}
            </td>
            <td>
              <When iso={c.created_at} />
            </td>
          </tr>
        ))}
      </Table>
      <Pager
        prev={!!after}
        next={!!contacts.data?.pagination.next_cursor}
        onPrev={() => history.back()}
        onNext={() => navigate(`/console/p/${project}/accounts/${account}?tab=contacts&after=${contacts.data?.pagination.next_cursor}`)}
      />
    </Card>
  )
}

interface Conversation {
  id: string
  contact: Contact
  phone_number?: { id: string; number: string; name: string | null; type: string }
}

interface Message {
  id: string
  status: string
  direction: 'inbound' | 'outbound'
  body: string | null
  attachments: { id: string; type: string; url: string }[]
  conversation: { id: string }
  segments: number
  created_at: string
  failure_reason?: string | null
}

/** A list read page by page, newest first. */
interface Paged<T> {
  items: T[]
  /** The cursor of the next (older) page; null when there is none. */
  next: string | null
  loaded: boolean
  loading: boolean
  error: string
  /** Appends the next page. */
  more: () => Promise<void>
}

/** Reads path with params page by page (limit at a time), starting over when they change; an
 * empty path reads nothing. */
function usePaged<T>(path: string, params: Record<string, string>, limit: number): Paged<T> {
  const [p, set] = useState<Omit<Paged<T>, 'more'>>({ items: [], next: null, loaded: false, loading: false, error: '' })
  const generation = useRef(0)
  const key = path + query(params)
  const run = async (after: string, prev: T[], gen: number) => {
    set({ items: prev, next: after || null, loaded: !!after, loading: true, error: '' })
    try {
      const page = await api.get<Page<T>>(path + query({ ...params, after, limit }))
      if (gen === generation.current) set({ items: [...prev, ...page.data], next: page.pagination.next_cursor, loaded: true, loading: false, error: '' })
    } catch (err) {
      if (gen === generation.current) set({ items: prev, next: after || null, loaded: true, loading: false, error: (err as Error).message })
    }
  }
  useEffect(() => {
    const gen = ++generation.current
    if (path) run('', [], gen)
    else set({ items: [], next: null, loaded: true, loading: false, error: '' })
  }, [key])
  return { ...p, more: () => (p.next && !p.loading ? run(p.next, p.items, generation.current) : Promise.resolve()) }
}

/** The account's conversations, read-only, in the inbox's own list and thread (src/ui/inbox): an
 * operator looks, the account's users answer. Nothing here writes, not even a read mark. */
function Conversations({ project, account }: ProjectProps & { account: string }) {
  const convs = usePaged<Conversation>(pub(project, `/accounts/${account}/conversations`), {}, 50)
  // The first conversation is open until one is picked ('' once closed: the list alone when narrow).
  const [open, setOpen] = useState<string | null>(null)
  const current = open ?? convs.items[0]?.id ?? ''
  const messages = usePaged<Message>(current && pub(project, `/accounts/${account}/messages`), { conversation_id: current }, 50)
  const items: Item[] = messages.items
    .filter((m) => m.conversation.id === current) // not the previous conversation's, while the new one loads
    .map((m) => ({ ...m, kind: 'message', conversation_id: m.conversation.id }))
  return (
    <Card flush>
      <div class="cx-inbox" data-testid="conversations">
        <InboxLayout
          list={
            <ConversationList
              title="Conversations"
              subtitle="read-only"
              conversations={convs.items}
              active={current}
              onOpen={setOpen}
              loaded={convs.loaded}
              error={convs.error}
              hasMore={!!convs.next}
              onMore={convs.more}
              emptyText="They appear when the account's numbers send or receive messages."
            />
          }
          open={current}
          detail={(back) => (
            <ConversationPane
              key={current}
              conversation={convs.items.find((c) => c.id === current)}
              items={inOrder(items)}
              loaded={messages.loaded}
              loading={messages.loading}
              error={messages.error}
              hasMore={!!messages.next}
              onMore={messages.more}
              readOnly
              inlineMedia={false}
              detailed
              onBack={back}
            />
          )}
          onClose={() => setOpen('')}
          placeholder="Pick a conversation on the left to read it."
        />
      </div>
    </Card>
  )
}

interface Blast {
  id: string
  name: string | null
  body: string | null
  status: string
  send_at: string
  recipients: number
  queued: number
  sent: number
  delivered: number
  failed: number
  skipped: number
}

/** Blasts with their counters, refreshed every second while one is on its way. */
function Blasts({ project, account }: ProjectProps & { account: string }) {
  const blasts = useLoad(() => api.get<Page<Blast>>(pub(project, `/accounts/${account}/blasts?limit=25`)), [account])
  const moving = (blasts.data?.data || []).some((b) => b.status !== 'sent' && b.status !== 'canceled')
  useEffect(() => {
    if (!moving) return
    const t = setInterval(blasts.reload, 1000)
    return () => clearInterval(t)
  }, [moving])
  return (
    <Card title="Blasts" flush actions={moving ? <Badge tone="info">live</Badge> : undefined}>
      <ErrorText error={blasts.error} />
      <Table head={['Blast', 'Status', 'Progress', 'Sent', 'Delivered', 'Failed', 'Skipped', 'Send at']} empty="No blasts. Create them with POST /accounts/{id}/blasts.">
        {blasts.data?.data.map((b) => {
          const total = Math.max(b.recipients, 1)
          const done = b.delivered + b.sent + b.failed + b.skipped
          return (
            <tr key={b.id} data-blast={b.id}>
              <td class="cx-wrap">
                <span class="cx-strong">{b.name || 'Untitled blast'}</span>
                <div class="cx-faint cx-small cx-ellipsis">{b.body}</div>
              </td>
              <td>
                <Status value={b.status} />
              </td>
              <td class="cx-progress-cell">
                <div class="cx-progress" title={`${done} of ${b.recipients} handled`}>
                  <span class="cx-progress-ok" style={{ width: `${(b.delivered / total) * 100}%` }} />
                  <span class="cx-progress-sent" style={{ width: `${(b.sent / total) * 100}%` }} />
                  <span class="cx-progress-bad" style={{ width: `${((b.failed + b.skipped) / total) * 100}%` }} />
                </div>
                <div class="cx-small cx-faint">
                  {done} / {b.recipients}
                </div>
              </td>
              <td class="cx-num" data-counter="sent">{b.sent}</td>
              <td class="cx-num" data-counter="delivered">{b.delivered}</td>
              <td class="cx-num" data-counter="failed">{b.failed}</td>
              <td class="cx-num" data-counter="skipped">{b.skipped}</td>
              <td>
                <When iso={b.send_at} />
              </td>
            </tr>
          )
        })}
      </Table>
    </Card>
  )
}

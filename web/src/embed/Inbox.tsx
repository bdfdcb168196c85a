// The inbox: the account's conversations, most recent first, with search and infinite scroll;
// the open conversation beside the list (or instead of it when narrow).
import { useEffect, useRef, useState } from 'preact/hooks'
import { Avatar, EmptyState, Icon, Spinner } from '../ui/components'
import { duration, formatPhone, shortTime } from '../ui/format'
import { ConversationView } from './Conversation'
import type { State } from './state'
import { useVersion } from './state'
import type { Conversation } from './types'

function preview(c: Conversation): string {
  const m = c.last_message
  const call = c.last_call
  if (call && (!m || call.initiated_at > m.created_at)) {
    if (call.status === 'completed') return `Call · ${duration(call.duration)}`
    return 'Missed call'
  }
  if (!m) return ''
  const body = m.body?.trim() || (m.has_attachments ? 'Attachment' : '')
  return m.direction === 'outbound' ? `You: ${body}` : body
}

function Row({ c, active, onOpen }: { c: Conversation; active: boolean; onOpen: () => void }) {
  const unread = c.unread_count > 0
  return (
    <li>
      <button
        type="button"
        class={`sb-row${active ? ' sb-row-active' : ''}${unread ? ' sb-row-unread' : ''}`}
        onClick={onOpen}
        data-conversation={c.id}
        aria-current={active ? 'true' : undefined}
      >
        <Avatar name={c.contact.name} seed={c.contact.id} />
        <span class="sb-row-main">
          <span class="sb-row-top">
            <span class="sb-row-name">{c.contact.name === c.contact.phone_number ? formatPhone(c.contact.name) : c.contact.name}</span>
            <span class="sb-row-time">{c.last_activity_at ? shortTime(c.last_activity_at) : ''}</span>
          </span>
          <span class="sb-row-bottom">
            <span class="sb-row-preview">{preview(c)}</span>
            {unread && (
              <span class="sb-count" data-testid="row-unread" aria-label={`${c.unread_count} unread`}>
                {c.unread_count > 99 ? '99+' : c.unread_count}
              </span>
            )}
            {c.contact.opted_out && <span class="sb-pill sb-pill-muted">Opted out</span>}
          </span>
        </span>
      </button>
    </li>
  )
}

export function Inbox({ state, open, onOpen }: { state: State; open: string; onOpen: (id: string) => void }) {
  useVersion(state)
  const [query, setQuery] = useState('')
  const [wide, setWide] = useState(window.innerWidth >= 680)
  const sentinel = useRef<HTMLLIElement>(null)
  const first = useRef(true)

  useEffect(() => {
    state.loadList()
    state.loadUnread()
    const onResize = () => setWide(window.innerWidth >= 680)
    window.addEventListener('resize', onResize)
    return () => window.removeEventListener('resize', onResize)
  }, [])

  useEffect(() => {
    if (first.current) {
      first.current = false
      return
    }
    const t = setTimeout(() => state.setSearch(query), 250)
    return () => clearTimeout(t)
  }, [query])

  useEffect(() => {
    const el = sentinel.current
    if (!el) return
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && state.loadList(true))
    io.observe(el)
    return () => io.disconnect()
  })

  const select = (id: string) => {
    onOpen(id)
    state.conn.emit({ type: 'conversation.opened', conversation_id: id })
  }

  const list = (
    <div class="sb-list-pane">
      <div class="sb-list-head">
        <div class="sb-list-title">
          Inbox
          {state.unread && state.unread.unread_conversations > 0 && (
            <span class="sb-list-subtitle">{state.unread.unread_conversations} unread</span>
          )}
        </div>
        <label class="sb-search">
          <Icon.search />
          <span class="sb-visually-hidden">Search conversations</span>
          <input
            type="search"
            placeholder="Search by name or number"
            value={query}
            onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
          />
        </label>
      </div>
      <div class="sb-list-scroll">
        {state.listError && !state.list.length ? (
          <EmptyState icon={<Icon.alert />} title="Couldn't load conversations">
            {state.listError}
          </EmptyState>
        ) : !state.listLoaded ? (
          <div class="sb-center">
            <Spinner />
          </div>
        ) : state.list.length === 0 ? (
          state.search ? (
            <EmptyState icon={<Icon.search size={20} />} title="No matches">
              No conversation matches “{state.search}”.
            </EmptyState>
          ) : (
            <EmptyState icon={<Icon.chat />} title="No conversations yet">
              When customers text your numbers, their messages show up here.
            </EmptyState>
          )
        ) : (
          <ul class="sb-list" aria-label="Conversations">
            {state.list.map((id) => {
              const c = state.conversations.get(id)!
              return <Row key={id} c={c} active={id === open} onOpen={() => select(id)} />
            })}
            {state.next && (
              <li ref={sentinel} class="sb-list-more">
                <Spinner label="Loading more" />
              </li>
            )}
          </ul>
        )}
      </div>
    </div>
  )

  if (!wide) {
    return open ? <ConversationView state={state} id={open} onBack={() => onOpen('')} /> : list
  }
  return (
    <div class="sb-inbox">
      {list}
      <div class="sb-detail-pane">
        {open ? (
          <ConversationView key={open} state={state} id={open} />
        ) : (
          <EmptyState icon={<Icon.chat />} title="Select a conversation">
            Pick a conversation on the left to read and reply.
          </EmptyState>
        )}
      </div>
    </div>
  )
}

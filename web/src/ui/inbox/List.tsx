// The inbox's list of conversations and the layout that puts the open one beside it (or instead
// of it when narrow), shared by the embedded inbox and the console's read-only conversations.
// Like ConversationPane they render what they are given and act through their callbacks.
import type { ComponentChildren } from 'preact'
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { Avatar, EmptyState, Icon, Spinner } from '../components'
import { duration, formatPhone, shortTime } from '../format'
import './inbox.css'
import type { InboxConversation } from './types'
import { contactName } from './types'

function preview(c: InboxConversation): string {
  const m = c.last_message
  const call = c.last_call
  if (call && (!m || call.initiated_at > m.created_at)) {
    if (call.status === 'completed') return `Call · ${duration(call.duration)}`
    return 'Missed call'
  }
  if (!m) return c.phone_number ? `via ${c.phone_number.name || formatPhone(c.phone_number.number)}` : ''
  const body = m.body?.trim() || (m.has_attachments ? 'Attachment' : '')
  return m.direction === 'outbound' ? `You: ${body}` : body
}

function Row({ c, active, onOpen }: { c: InboxConversation; active: boolean; onOpen: () => void }) {
  const unread = (c.unread_count || 0) > 0
  const name = contactName(c.contact)
  return (
    <li>
      <button
        type="button"
        class={`sb-row${active ? ' sb-row-active' : ''}${unread ? ' sb-row-unread' : ''}`}
        onClick={onOpen}
        data-conversation={c.id}
        aria-current={active ? 'true' : undefined}
      >
        <Avatar name={name} seed={c.contact.id} />
        <span class="sb-row-main">
          <span class="sb-row-top">
            <span class="sb-row-name">{name}</span>
            <span class="sb-row-time">{c.last_activity_at ? shortTime(c.last_activity_at) : ''}</span>
          </span>
          <span class="sb-row-bottom">
            <span class="sb-row-preview">{preview(c)}</span>
            {unread && (
              <span class="sb-count" data-testid="row-unread" aria-label={`${c.unread_count} unread`}>
                {c.unread_count! > 99 ? '99+' : c.unread_count}
              </span>
            )}
            {c.contact.opted_out && <span class="sb-pill sb-pill-muted">Opted out</span>}
          </span>
        </span>
      </button>
    </li>
  )
}

/** What ConversationList shows, and how it asks for more. */
export interface ConversationListProps {
  title: string
  /** Beside the title (e.g. how many are unread). */
  subtitle?: string
  conversations: InboxConversation[]
  /** The open conversation's id, or ''. */
  active: string
  onOpen: (id: string) => void
  /** Whether the first page has arrived. */
  loaded: boolean
  /** Why the list could not be loaded, if it could not. */
  error?: string
  /** Whether more remain; scrolling to the end then calls onMore. */
  hasMore?: boolean
  onMore?: () => void
  /** A search box: what is typed, what to do with it, and the search the list shows. */
  search?: { query: string; onQuery: (q: string) => void; applied: string }
  /** The text of the empty list. */
  emptyText: string
}

/** The list pane: a title, an optional search, the conversations most recent first. */
export function ConversationList(p: ConversationListProps) {
  const sentinel = useRef<HTMLLIElement>(null)
  useEffect(() => {
    const el = sentinel.current
    const more = p.onMore
    if (!el || !more) return
    const io = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && more())
    io.observe(el)
    return () => io.disconnect()
  })
  return (
    <div class="sb-list-pane">
      <div class="sb-list-head">
        <div class="sb-list-title">
          {p.title}
          {p.subtitle && <span class="sb-list-subtitle">{p.subtitle}</span>}
        </div>
        {p.search && (
          <label class="sb-search">
            <Icon.search />
            <span class="sb-visually-hidden">Search conversations</span>
            <input
              type="search"
              placeholder="Search by name or number"
              value={p.search.query}
              onInput={(e) => p.search!.onQuery((e.target as HTMLInputElement).value)}
            />
          </label>
        )}
      </div>
      <div class="sb-list-scroll">
        {p.error && !p.conversations.length ? (
          <EmptyState icon={<Icon.alert />} title="Couldn't load conversations">
            {p.error}
          </EmptyState>
        ) : !p.loaded ? (
          <div class="sb-center">
            <Spinner />
          </div>
        ) : p.conversations.length === 0 ? (
          p.search?.applied ? (
            <EmptyState icon={<Icon.search size={20} />} title="No matches">
              No conversation matches “{p.search.applied}”.
            </EmptyState>
          ) : (
            <EmptyState icon={<Icon.chat />} title="No conversations yet">
              {p.emptyText}
            </EmptyState>
          )
        ) : (
          <ul class="sb-list" aria-label="Conversations">
            {p.conversations.map((c) => (
              <Row key={c.id} c={c} active={c.id === p.active} onOpen={() => p.onOpen(c.id)} />
            ))}
            {p.hasMore && (
              <li ref={sentinel} class="sb-list-more">
                <Spinner label="Loading more" />
              </li>
            )}
          </ul>
        )}
      </div>
    </div>
  )
}

/** What InboxLayout lays out. */
export interface InboxLayoutProps {
  /** The list pane (a ConversationList). */
  list: ComponentChildren
  /** The open conversation's id, or ''. */
  open: string
  /** The open conversation's pane, given a way back to the list when it is shown alone. */
  detail: (back?: () => void) => ComponentChildren
  /** Closes the open conversation (back to the list when narrow). */
  onClose: () => void
  /** The text beside the list while no conversation is open. */
  placeholder: string
}

/** The list beside the open conversation when there is room for both (680 pixels), otherwise
 * one of them: the conversation when one is open. */
export function InboxLayout({ list, open, detail, onClose, placeholder }: InboxLayoutProps) {
  const box = useRef<HTMLDivElement>(null)
  const [wide, setWide] = useState(true)
  useLayoutEffect(() => {
    const el = box.current!
    const measure = () => setWide(el.clientWidth >= 680)
    measure()
    const ro = new ResizeObserver(measure)
    ro.observe(el)
    return () => ro.disconnect()
  }, [])
  return (
    <div class={`sb-inbox${wide ? '' : ' sb-inbox-narrow'}`} ref={box}>
      {(wide || !open) && list}
      {(wide || open) && (
        <div class="sb-detail-pane">
          {open ? (
            detail(wide ? undefined : onClose)
          ) : (
            <EmptyState icon={<Icon.chat />} title="Select a conversation">
              {placeholder}
            </EmptyState>
          )}
        </div>
      )}
    </div>
  )
}

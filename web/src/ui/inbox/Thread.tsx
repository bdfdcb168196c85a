// One conversation as the embedded components and the console show it: its header, its thread
// (messages with their statuses, segments and attachments, calls with their voicemails) and,
// unless read-only, a composer. It renders what it is given and writes only through its
// callbacks; a read-only thread has no composer and never marks anything read. A message body is
// always text (links made clickable), never HTML.
import type { ComponentChildren } from 'preact'
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { Avatar, Banner, EmptyState, Icon, Spinner } from '../components'
import { clockTime, dayHeading, duration, formatPhone, isSameDay } from '../format'
import './inbox.css'
import type { Attachment, InboxConversation, Item } from './types'
import { contactName } from './types'

const reasons: Record<string, string> = {
  invalid_mobile_number: 'invalid number',
  unreachable_carrier: 'unreachable',
  landline: 'landline',
  carrier_filtered: 'filtered by the carrier',
  opted_out_at_carrier: 'opted out at the carrier',
  expired: 'expired',
  attachment_unreachable: 'attachment unreachable',
  unknown_error: 'unknown error',
}

function statusLabel(it: Item): string {
  switch (it.status) {
    case 'queued':
    case 'sending':
    case 'scheduled':
      return 'Sending…'
    case 'sent':
      return 'Sent'
    case 'delivered':
      return 'Delivered'
    case 'failed':
      return `Failed${it.failure_reason ? ` · ${reasons[it.failure_reason] || it.failure_reason.replace(/_/g, ' ')}` : ''}`
    case 'canceled':
      return 'Canceled'
  }
  return ''
}

/** Text with its web links made clickable; everything else stays text (never HTML). */
function Linkified({ text }: { text: string }) {
  const parts: ComponentChildren[] = []
  const re = /\bhttps?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)\]]/g
  let last = 0
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) parts.push(text.slice(last, m.index))
    parts.push(
      <a href={m[0]} target="_blank" rel="noopener noreferrer">
        {m[0]}
      </a>,
    )
    last = m.index + m[0].length
  }
  if (last < text.length) parts.push(text.slice(last))
  return <>{parts}</>
}

const attachmentNames: Record<string, string> = { image: 'Attached image', video: 'Attached video', contact: 'Contact card' }

function AttachmentView({ a, inline }: { a: Attachment; inline: boolean }) {
  if (inline && a.type === 'image')
    return (
      <a class="sb-att-image" href={a.url} target="_blank" rel="noopener noreferrer">
        <img src={a.url} alt="Attached image" loading="lazy" />
      </a>
    )
  if (inline && a.type === 'video') return <video class="sb-att-video" src={a.url} controls preload="metadata" />
  return (
    <a class="sb-att-file" href={a.url} target="_blank" rel="noopener noreferrer">
      <Icon.file /> {attachmentNames[a.type] || 'Attached file'}
    </a>
  )
}

function CallRow({ it }: { it: Item }) {
  const answered = it.status === 'completed'
  return (
    <div class="sb-call" data-item={it.id}>
      <div class="sb-call-line">
        <Icon.phone />
        <span>
          {answered ? 'Call' : it.status === 'busy' ? 'Busy' : 'Missed call'}
          {answered && it.duration ? ` · ${duration(it.duration)}` : ''} · {clockTime(it.created_at)}
        </span>
      </div>
      {it.voicemail && (
        <div class="sb-voicemail">
          <span class="sb-voicemail-label">Voicemail · {duration(it.voicemail.duration)}</span>
          <audio controls preload="none" src={it.voicemail.url} />
        </div>
      )}
    </div>
  )
}

function Bubble({ it, showMeta, inlineMedia }: { it: Item; showMeta: boolean; inlineMedia: boolean }) {
  const out = it.direction === 'outbound'
  return (
    <div class={`sb-msg ${out ? 'sb-msg-out' : 'sb-msg-in'}`} data-item={it.id} data-status={it.status}>
      {(it.body || it.attachments?.length) && (
        <div class={`sb-bubble${it.status === 'failed' ? ' sb-bubble-failed' : ''}`}>
          {it.attachments?.map((a) => <AttachmentView key={a.id} a={a} inline={inlineMedia} />)}
          {it.body && (
            <div class="sb-bubble-text">
              <Linkified text={it.body} />
            </div>
          )}
        </div>
      )}
      {showMeta && (
        <div class="sb-msg-meta">
          {clockTime(it.created_at)}
          {out && (
            <span class={`sb-status sb-status-${it.status}`} data-testid="status">
              {' · '}
              {statusLabel(it)}
            </span>
          )}
          {it.segments !== undefined && ` · ${it.segments} segment${it.segments === 1 ? '' : 's'}`}
          {it.auto_reply && ' · automatic reply'}
        </div>
      )}
    </div>
  )
}

/** Sends a reply: its text and an attachment's URL (either may be empty). */
export type Send = (body: string, attachmentURL: string) => Promise<void>

function Composer({ c, onSend }: { c: InboxConversation; onSend: Send }) {
  const [body, setBody] = useState('')
  const [url, setUrl] = useState('')
  const [attaching, setAttaching] = useState(false)
  const [sending, setSending] = useState(false)
  const [error, setError] = useState('')
  const area = useRef<HTMLTextAreaElement>(null)

  useLayoutEffect(() => {
    const el = area.current
    if (!el) return
    el.style.height = 'auto'
    el.style.height = `${Math.min(el.scrollHeight, 120)}px`
  }, [body])

  if (c.can_reply === false) {
    const who = c.contact.first_name || 'This contact'
    return (
      <div class="sb-composer-off" data-testid="composer-disabled">
        {c.reply_disabled_reason === 'opted_out'
          ? `${who} opted out of messages. You can reply once they text START.`
          : `Outbound messages to ${who === 'This contact' ? 'this contact' : who} are turned off.`}
      </div>
    )
  }

  const send = async () => {
    const text = body.trim()
    if ((!text && !url.trim()) || sending) return
    setSending(true)
    setError('')
    try {
      await onSend(text, url.trim())
      setBody('')
      setUrl('')
      setAttaching(false)
    } catch (err) {
      setError((err as Error).message)
    } finally {
      setSending(false)
      area.current?.focus()
    }
  }

  return (
    <form
      class="sb-composer"
      onSubmit={(e) => {
        e.preventDefault()
        send()
      }}
    >
      {error && <div class="sb-composer-error" role="alert">{error}</div>}
      {attaching && (
        <div class="sb-composer-attach">
          <input
            type="url"
            placeholder="https://… link to an image or file"
            value={url}
            onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
            aria-label="Attachment URL"
          />
          <button type="button" class="sb-icon-button" onClick={() => (setAttaching(false), setUrl(''))} aria-label="Remove attachment">
            <Icon.close />
          </button>
        </div>
      )}
      <div class="sb-composer-row">
        <button
          type="button"
          class="sb-icon-button"
          onClick={() => setAttaching(!attaching)}
          aria-label="Attach a file by URL"
          aria-pressed={attaching}
        >
          <Icon.paperclip />
        </button>
        <textarea
          ref={area}
          rows={1}
          placeholder="Write a message"
          value={body}
          maxLength={1600}
          onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault()
              send()
            }
          }}
          aria-label="Message"
        />
        <button type="submit" class="sb-button sb-send" disabled={sending || (!body.trim() && !url.trim())} aria-label="Send">
          <Icon.send size={16} />
          <span>Send</span>
        </button>
      </div>
    </form>
  )
}

/** What ConversationPane shows, and how it asks for more or writes. */
export interface ConversationPaneProps {
  /** The conversation; undefined while it loads. */
  conversation?: InboxConversation
  /** Its thread, oldest first (inOrder). */
  items: Item[]
  /** Whether the newest page of the thread has arrived. */
  loaded: boolean
  /** Whether an older page is on its way. */
  loading?: boolean
  /** Why the conversation or its thread could not be loaded, if it could not. */
  error?: string
  /** Whether older items remain; scrolling to the top then calls onMore. */
  hasMore?: boolean
  onMore?: () => Promise<void>
  /** No composer, nothing marked read: someone looks at a conversation that is not theirs. */
  readOnly?: boolean
  /** Marks the conversation read up to a message once it shows while the page is visible; a
   * rejection lets it try again. Never called when readOnly. */
  onRead?: (messageId: string) => Promise<unknown>
  /** Sends a reply from the composer (shown only with it, and not when readOnly). */
  onSend?: Send
  /** Shows a back button (the inbox when narrow). */
  onBack?: () => void
  /** Images and videos shown in the thread; otherwise every attachment is a link. */
  inlineMedia?: boolean
  /** Time, status and segments under every message, not only the last of a group. */
  detailed?: boolean
}

/** One conversation: header, thread, and the composer unless read-only. */
export function ConversationPane(p: ConversationPaneProps) {
  const { conversation: c, items, readOnly = false, inlineMedia = true } = p
  const scroller = useRef<HTMLDivElement>(null)
  const stick = useRef(true)
  const lastRead = useRef('')
  const newest = items.length ? items[items.length - 1] : null

  useEffect(() => {
    lastRead.current = ''
    stick.current = true
  }, [c?.id])

  // Reading: the newest message, once it shows while the page is visible.
  const newestMessage = [...items].reverse().find((it) => it.kind === 'message')
  useEffect(() => {
    const onRead = p.onRead
    if (readOnly || !onRead) return
    const mark = () => {
      if (!newestMessage || !c || document.visibilityState !== 'visible') return
      if (!c.unread_count || lastRead.current >= newestMessage.id) return
      lastRead.current = newestMessage.id
      onRead(newestMessage.id).catch(() => {
        lastRead.current = ''
      })
    }
    mark()
    document.addEventListener('visibilitychange', mark)
    return () => document.removeEventListener('visibilitychange', mark)
  }, [c?.id, newestMessage?.id, c?.unread_count, readOnly])

  useLayoutEffect(() => {
    const el = scroller.current
    if (el && stick.current) el.scrollTop = el.scrollHeight
  }, [items.length, newest?.id, newest?.status])

  const onScroll = () => {
    const el = scroller.current
    if (!el) return
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40
    if (el.scrollTop < 60 && p.hasMore && !p.loading && p.onMore) {
      const before = el.scrollHeight
      p.onMore().then(() => {
        el.scrollTop += el.scrollHeight - before
      })
    }
  }

  if (p.error && !c) {
    return (
      <EmptyState icon={<Icon.alert />} title="Conversation unavailable">
        {p.error}
      </EmptyState>
    )
  }
  if (!c) {
    return (
      <div class="sb-center">
        <Spinner />
      </div>
    )
  }
  const name = contactName(c.contact)
  const phone = formatPhone(c.contact.phone_number)
  const line = c.phone_number && (c.phone_number.name ? `${c.phone_number.name} · ${formatPhone(c.phone_number.number)}` : formatPhone(c.phone_number.number))
  return (
    <div class="sb-conv" data-conversation={c.id}>
      <header class="sb-conv-head">
        {p.onBack && (
          <button type="button" class="sb-icon-button" onClick={p.onBack} aria-label="Back to the inbox">
            <Icon.back />
          </button>
        )}
        <Avatar name={name} seed={c.contact.id} size={34} />
        <div class="sb-conv-who">
          <div class="sb-conv-name">
            {name}
            {c.contact.opted_out && <span class="sb-pill sb-pill-danger">Opted out</span>}
            {readOnly && <span class="sb-pill sb-pill-muted" data-testid="read-only">Read-only</span>}
          </div>
          <div class="sb-conv-sub">
            {name !== phone && <>{phone}</>}
            {name !== phone && line && ' · '}
            {line && <>via {line}</>}
          </div>
        </div>
      </header>
      {p.error && <Banner kind="error">{p.error}</Banner>}
      <div class="sb-thread" ref={scroller} onScroll={onScroll}>
        {p.loading && p.loaded && (
          <div class="sb-thread-more">
            <Spinner label="Loading earlier messages" />
          </div>
        )}
        {!p.loaded ? (
          <div class="sb-center">
            <Spinner />
          </div>
        ) : items.length === 0 ? (
          <EmptyState icon={<Icon.chat />} title="No messages yet">
            {readOnly ? 'Nothing has been sent or received in this conversation.' : `Say hello to ${c.contact.first_name || name}.`}
          </EmptyState>
        ) : (
          items.map((it, i) => {
            const prev = items[i - 1]
            const next = items[i + 1]
            const day = !prev || !isSameDay(prev.created_at, it.created_at)
            const lastOfGroup =
              p.detailed ||
              !next ||
              next.kind !== it.kind ||
              next.direction !== it.direction ||
              next.status !== it.status ||
              new Date(next.created_at).getTime() - new Date(it.created_at).getTime() > 5 * 60000
            return (
              <div key={it.id}>
                {day && <div class="sb-day">{dayHeading(it.created_at)}</div>}
                {it.kind === 'call' ? <CallRow it={it} /> : <Bubble it={it} showMeta={lastOfGroup} inlineMedia={inlineMedia} />}
              </div>
            )
          })
        )}
      </div>
      {!readOnly && p.onSend && <Composer c={c} onSend={p.onSend} />}
    </div>
  )
}

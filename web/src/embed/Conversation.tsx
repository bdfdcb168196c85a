// One conversation: its thread (messages, with their statuses and attachments, and calls with
// their voicemails), and a composer that replies as the user. Opening it marks it read.
import type { ComponentChildren } from 'preact'
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { Avatar, Banner, EmptyState, Icon, Spinner } from '../ui/components'
import { clockTime, dayHeading, duration, formatPhone, isSameDay } from '../ui/format'
import type { State } from './state'
import { useVersion } from './state'
import type { Attachment, Conversation, Item } from './types'

const suffix = (id: string) => id.slice(id.indexOf('_') + 1)

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
      return `Failed${it.failure_reason ? ` · ${reasons[it.failure_reason] || it.failure_reason}` : ''}`
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

function AttachmentView({ a }: { a: Attachment }) {
  if (a.type === 'image')
    return (
      <a class="sb-att-image" href={a.url} target="_blank" rel="noopener noreferrer">
        <img src={a.url} alt="Attached image" loading="lazy" />
      </a>
    )
  if (a.type === 'video') return <video class="sb-att-video" src={a.url} controls preload="metadata" />
  return (
    <a class="sb-att-file" href={a.url} target="_blank" rel="noopener noreferrer">
      <Icon.file /> {a.type === 'contact' ? 'Contact card' : 'Attached file'}
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

function Bubble({ it, showMeta }: { it: Item; showMeta: boolean }) {
  const out = it.direction === 'outbound'
  return (
    <div class={`sb-msg ${out ? 'sb-msg-out' : 'sb-msg-in'}`} data-item={it.id} data-status={it.status}>
      {(it.body || it.attachments?.length) && (
        <div class={`sb-bubble${it.status === 'failed' ? ' sb-bubble-failed' : ''}`}>
          {it.attachments?.map((a) => <AttachmentView key={a.id} a={a} />)}
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
          {it.auto_reply && ' · automatic reply'}
        </div>
      )}
    </div>
  )
}

function Composer({ state, c }: { state: State; c: Conversation }) {
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

  if (!c.can_reply) {
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
      const it = await state.conn.postJSON<Item>(`/embed/api/conversations/${encodeURIComponent(c.id)}/messages`, {
        body: text,
        attachment_url: url.trim(),
      })
      state.applyItem(it)
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

export function ConversationView({ state, id, onBack }: { state: State; id: string; onBack?: () => void }) {
  useVersion(state)
  const scroller = useRef<HTMLDivElement>(null)
  const stick = useRef(true)
  const lastRead = useRef('')
  const c = state.conversations.get(id)
  const t = state.thread(id)
  // In the ids' order, as the server pages the thread (TypeIDs of any kind compare by their suffix).
  const items = [...t.items.values()].sort((a, b) => suffix(a.id).localeCompare(suffix(b.id)))
  const newest = items.length ? items[items.length - 1] : null

  useEffect(() => {
    lastRead.current = ''
    stick.current = true
    if (!state.conversations.has(id)) state.loadConversation(id)
    state.loadThread(id)
  }, [id])

  // Reading: the newest message, once it shows while the page is visible.
  const newestMessage = [...items].reverse().find((it) => it.kind === 'message')
  useEffect(() => {
    const mark = () => {
      if (!newestMessage || !c || document.visibilityState !== 'visible') return
      if (c.unread_count === 0 || lastRead.current >= newestMessage.id) return
      lastRead.current = newestMessage.id
      state.conn
        .postJSON<Conversation>(`/embed/api/conversations/${encodeURIComponent(id)}/read`, { message_id: newestMessage.id })
        .then((cv) => state.applyConversation(cv))
        .catch(() => {
          lastRead.current = ''
        })
    }
    mark()
    document.addEventListener('visibilitychange', mark)
    return () => document.removeEventListener('visibilitychange', mark)
  }, [id, newestMessage?.id, c?.unread_count])

  useLayoutEffect(() => {
    const el = scroller.current
    if (el && stick.current) el.scrollTop = el.scrollHeight
  }, [items.length, newest?.id, newest?.status])

  const onScroll = () => {
    const el = scroller.current
    if (!el) return
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40
    if (el.scrollTop < 60 && t.next && !t.loading) {
      const before = el.scrollHeight
      state.loadThread(id, true).then(() => {
        el.scrollTop += el.scrollHeight - before
      })
    }
  }

  if (t.error && !c) {
    return (
      <EmptyState icon={<Icon.alert />} title="Conversation unavailable">
        {t.error}
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
  const name = c.contact.name === c.contact.phone_number ? formatPhone(c.contact.name) : c.contact.name
  const line = c.phone_number.name ? `${c.phone_number.name} · ${formatPhone(c.phone_number.number)}` : formatPhone(c.phone_number.number)
  return (
    <div class="sb-conv" data-conversation={c.id}>
      <header class="sb-conv-head">
        {onBack && (
          <button type="button" class="sb-icon-button" onClick={onBack} aria-label="Back to the inbox">
            <Icon.back />
          </button>
        )}
        <Avatar name={c.contact.name} seed={c.contact.id} size={34} />
        <div class="sb-conv-who">
          <div class="sb-conv-name">
            {name}
            {c.contact.opted_out && <span class="sb-pill sb-pill-danger">Opted out</span>}
          </div>
          <div class="sb-conv-sub">
            {name !== formatPhone(c.contact.phone_number) && <>{formatPhone(c.contact.phone_number)} · </>}via {line}
          </div>
        </div>
      </header>
      {t.error && <Banner kind="error">{t.error}</Banner>}
      <div class="sb-thread" ref={scroller} onScroll={onScroll}>
        {t.loading && t.loaded && (
          <div class="sb-thread-more">
            <Spinner label="Loading earlier messages" />
          </div>
        )}
        {!t.loaded ? (
          <div class="sb-center">
            <Spinner />
          </div>
        ) : items.length === 0 ? (
          <EmptyState icon={<Icon.chat />} title="No messages yet">
            Say hello to {c.contact.first_name || name}.
          </EmptyState>
        ) : (
          items.map((it, i) => {
            const prev = items[i - 1]
            const next = items[i + 1]
            const day = !prev || !isSameDay(prev.created_at, it.created_at)
            const lastOfGroup =
              !next ||
              next.kind !== it.kind ||
              next.direction !== it.direction ||
              next.status !== it.status ||
              new Date(next.created_at).getTime() - new Date(it.created_at).getTime() > 5 * 60000
            return (
              <div key={it.id}>
                {day && <div class="sb-day">{dayHeading(it.created_at)}</div>}
                {it.kind === 'call' ? <CallRow it={it} /> : <Bubble it={it} showMeta={lastOfGroup} />}
              </div>
            )
          })
        )}
      </div>
      <Composer state={state} c={c} />
    </div>
  )
}

// The unread badge: how many of the account's conversations have messages the user has not
// read, for an app's navigation bar. It sizes its iframe to itself (nothing when there are none).
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks'
import type { State } from './state'
import { useVersion } from './state'

export function UnreadBadge({ state }: { state: State }) {
  useVersion(state)
  const el = useRef<HTMLSpanElement>(null)
  useEffect(() => {
    state.loadUnread()
  }, [])
  const n = state.unread?.unread_conversations ?? 0
  useLayoutEffect(() => {
    const r = el.current?.getBoundingClientRect()
    state.conn.resize(r ? r.height : 0, r ? r.width : 0)
  }, [n])
  if (!n) return null
  return (
    <span
      ref={el}
      class="sb-count sb-badge"
      data-testid="unread-badge"
      title={`${n} unread conversation${n === 1 ? '' : 's'}`}
      aria-label={`${n} unread conversation${n === 1 ? '' : 's'}`}
    >
      {n > 99 ? '99+' : n}
    </span>
  )
}

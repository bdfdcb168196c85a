// The inbox: the account's conversations, most recent first, with search and infinite scroll;
// the open conversation beside the list (or instead of it when narrow). The shared list and
// layout (src/ui/inbox) fed from the page's state.
import { useEffect, useRef, useState } from 'preact/hooks'
import { ConversationList, InboxLayout } from '../ui/inbox/List'
import { ConversationView } from './Conversation'
import type { State } from './state'
import { useVersion } from './state'

export function Inbox({ state, open, onOpen }: { state: State; open: string; onOpen: (id: string) => void }) {
  useVersion(state)
  const [query, setQuery] = useState('')
  const first = useRef(true)

  useEffect(() => {
    state.loadList()
    state.loadUnread()
  }, [])

  useEffect(() => {
    if (first.current) {
      first.current = false
      return
    }
    const t = setTimeout(() => state.setSearch(query), 250)
    return () => clearTimeout(t)
  }, [query])

  const select = (id: string) => {
    onOpen(id)
    state.conn.emit({ type: 'conversation.opened', conversation_id: id })
  }
  const unread = state.unread?.unread_conversations || 0

  return (
    <InboxLayout
      list={
        <ConversationList
          title="Inbox"
          subtitle={unread > 0 ? `${unread} unread` : undefined}
          conversations={state.list.map((id) => state.conversations.get(id)!)}
          active={open}
          onOpen={select}
          loaded={state.listLoaded}
          error={state.listError}
          hasMore={!!state.next}
          onMore={() => state.loadList(true)}
          search={{ query, onQuery: setQuery, applied: state.search }}
          emptyText="When customers text your numbers, their messages show up here."
        />
      }
      open={open}
      detail={(back) => <ConversationView key={open} state={state} id={open} onBack={back} />}
      onClose={() => onOpen('')}
      placeholder="Pick a conversation on the left to read and reply."
    />
  )
}

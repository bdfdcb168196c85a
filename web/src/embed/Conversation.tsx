// One conversation of the components' API: the shared pane (src/ui/inbox) fed from the page's
// state, replying as the user and marking the conversation read as its messages show.
import { useEffect } from 'preact/hooks'
import { ConversationPane } from '../ui/inbox/Thread'
import { inOrder } from '../ui/inbox/types'
import type { State } from './state'
import { useVersion } from './state'
import type { Conversation, Item } from './types'

export function ConversationView({ state, id, onBack }: { state: State; id: string; onBack?: () => void }) {
  useVersion(state)
  const t = state.thread(id)
  const path = `/embed/api/conversations/${encodeURIComponent(id)}`

  useEffect(() => {
    if (!state.conversations.has(id)) state.loadConversation(id)
    state.loadThread(id)
  }, [id])

  return (
    <ConversationPane
      conversation={state.conversations.get(id)}
      items={inOrder(t.items.values())}
      loaded={t.loaded}
      loading={t.loading}
      error={t.error}
      hasMore={!!t.next}
      onMore={() => state.loadThread(id, true)}
      onRead={(message_id) => state.conn.postJSON<Conversation>(`${path}/read`, { message_id }).then((c) => state.applyConversation(c))}
      onSend={async (body, attachment_url) => state.applyItem(await state.conn.postJSON<Item>(`${path}/messages`, { body, attachment_url }))}
      onBack={onBack}
    />
  )
}

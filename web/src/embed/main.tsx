// The embedded components' page (/embed/inbox, /embed/conversation, /embed/unread): it reads
// which component from its path and mounts it once the host page has handed it a token.
import '../ui/styles.css'
import './embed.css'
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { Banner, EmptyState, Icon, Spinner } from '../ui/components'
import { ConversationView } from './Conversation'
import { Inbox } from './Inbox'
import { Connection } from './session'
import { State } from './state'
import { UnreadBadge } from './Unread'

const component = location.pathname.replace(/\/+$/, '').split('/').pop() || ''
const params = new URLSearchParams(location.search)
const conn = new Connection(params)
const state = new State(conn)
document.documentElement.dataset.component = component
// The badge sits in the host's navigation bar: nothing of its own shows around it.
if (component === 'unread') document.documentElement.classList.add('sb-transparent')

function useAuth() {
  const [s, set] = useState(conn.state)
  useEffect(() => {
    // The token may have come between the first render and this effect: read the state again.
    set(conn.state)
    return conn.subscribe(() => set(conn.state))
  }, [])
  return s
}

/** The banner shown over a component while its token is being renewed, or cannot be. */
function AuthBanner() {
  const auth = useAuth()
  if (auth.kind === 'expired')
    return (
      <Banner kind="warn">
        <Spinner label="Renewing the session" />
        <span data-testid="session-expired">Your session has expired. Renewing it…</span>
      </Banner>
    )
  if (auth.kind === 'failed')
    return (
      <Banner kind="error">
        <Icon.alert />
        <span data-testid="session-failed">{auth.message}</span>
      </Banner>
    )
  return null
}

function App() {
  const auth = useAuth()
  const [conversation, setConversation] = useState(params.get('conversation') || '')
  useEffect(() => {
    conn.onOpenConversation = setConversation
  }, [])
  useEffect(() => {
    if (auth.kind !== 'waiting' && !(auth.kind === 'failed' && !conn.framed)) return state.follow()
  }, [auth.kind === 'waiting'])
  if (auth.kind === 'waiting' && component === 'unread') return null
  if (auth.kind === 'waiting')
    return (
      <div class="sb-center">
        <Spinner />
      </div>
    )
  if (component === 'unread') return <UnreadBadge state={state} />
  return (
    <div class="sb-frame">
      <AuthBanner />
      <div class="sb-frame-body">
        {component === 'inbox' && <Inbox state={state} open={conversation} onOpen={setConversation} />}
        {component === 'conversation' &&
          (conversation ? (
            <ConversationView state={state} id={conversation} />
          ) : (
            <EmptyState icon={<Icon.chat />} title="No conversation selected">
              The app shows a conversation here once it picks one.
            </EmptyState>
          ))}
        {component !== 'inbox' && component !== 'conversation' && <EmptyState title="Unknown component" />}
      </div>
    </div>
  )
}

render(<App />, document.getElementById('app')!)

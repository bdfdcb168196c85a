// The demo host page (/embed/demo, served by `switchboard serve --dev-key` only): a stand-in for
// a customer's app that embeds the inbox, a conversation and the unread badge from Switchboard's
// other origin, exactly as the README shows, and gets fresh tokens from its "backend"
// (/embed/demo/token, standing for the app's own server calling POST /users/{id}/tokens).
import '../ui/styles.css'
import './demo.css'

interface Handle {
  openConversation(id: string): void
}
interface Loader {
  mount(el: string | Element, opts: Record<string, unknown>): Handle
}

const hash = new URLSearchParams(location.hash.slice(1))
const origin = hash.get('origin') || ''
const secret = hash.get('secret') || ''
const number = hash.get('number') || ''
let token = hash.get('token') || ''
// The link's secrets have been read: keep them out of the address bar.
history.replaceState(null, '', location.pathname)

const help = document.getElementById('help')!
const say = (html: string) => {
  help.innerHTML = html // the page's own text only: nothing from the API goes through here
}

async function getToken(): Promise<string> {
  const res = await fetch('/embed/demo/token', { method: 'POST', headers: { 'X-Demo-Secret': secret } })
  if (!res.ok) throw new Error(`the demo token endpoint answered ${res.status}`)
  return (await res.json()).token
}

function loadLoader(): Promise<Loader> {
  return new Promise((resolve, reject) => {
    const s = document.createElement('script')
    s.src = `${origin}/embed/v1.js`
    s.onload = () => resolve((window as unknown as { Switchboard: Loader }).Switchboard)
    s.onerror = () => reject(new Error('the loader did not load'))
    document.head.appendChild(s)
  })
}

async function main() {
  if (!origin || !secret) {
    say('<h2 class="demo-h2">Open the link from the terminal</h2><p class="demo-note">This page takes its settings from the link that <code>make run</code> (<code>switchboard serve --dev-key</code>) prints.</p>')
    return
  }
  try {
    await fetch(`${origin}/healthz`, { mode: 'no-cors', cache: 'no-store' })
  } catch {
    say(`<h2 class="demo-h2">Trust the local certificate</h2><p class="demo-note">Your browser refused Switchboard's self-signed certificate at <a href="${origin}/healthz" target="_blank">${origin}</a>. Open that link once, accept the warning, then reload this page.</p>`)
    return
  }
  const Switchboard = await loadLoader()
  if (!token) token = await getToken()
  const badge = document.getElementById('badge')!
  Switchboard.mount(badge, { component: 'unread', token, getToken })
  let conversation: Handle | null = null
  Switchboard.mount('#inbox', {
    component: 'inbox',
    token,
    getToken,
    height: 620,
    onEvent: (e: { type: string; conversation_id?: string }) => {
      if (e.type !== 'conversation.opened' || !e.conversation_id) return
      document.getElementById('conversation-note')!.hidden = true
      if (conversation) conversation.openConversation(e.conversation_id)
      else
        conversation = Switchboard.mount('#conversation', {
          component: 'conversation',
          conversationId: e.conversation_id,
          token,
          getToken,
          height: 420,
        })
    },
  })
  const from = '+14155550123'
  say(`<h2 class="demo-h2">Try it</h2><p class="demo-note">Text the demo number from a simulated handset, and watch the inbox and the badge:</p>
<pre class="demo-pre">switchboard sim inbound --from ${from} \\
  --to ${number || '+1…'} --body "Hi, can I move my appointment?"</pre>
<p class="demo-note">Reply from the inbox: <code>switchboard sim outbox --to ${from}</code> shows what the handset got.</p>`)
}

main().catch((err) => say(`<p class="demo-note">The demo could not start: ${String(err?.message || err).replace(/</g, '&lt;')}</p>`))

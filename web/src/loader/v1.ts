// The loader customers' pages include from Switchboard (<script src="https://switchboard.example/embed/v1.js">).
// It mounts a component in an iframe served by that same Switchboard, hands it the user's token
// by postMessage (never in a URL), asks the page for a new token through getToken before the old
// one expires or when it is refused, and sizes the iframe to its content when asked to.
import type { ComponentName, FromComponent, ToComponent } from '../embed/protocol'

export interface MountOptions {
  /** Which component: the inbox, one conversation, or the unread badge. */
  component: ComponentName
  /** A user token from POST /users/{user_id}/tokens (optional when getToken is given). */
  token?: string
  /** Returns a fresh user token: the component calls it before its token expires, or when refused. */
  getToken?: () => string | Promise<string>
  /** The conversation to show (component "conversation"). */
  conversationId?: string
  /** The iframe's height in pixels, or "auto" to follow the content. Defaults: inbox 600,
   * conversation 560, unread "auto". */
  height?: number | 'auto'
  /** Called with what happens inside: {type: "conversation.opened", conversation_id},
   * {type: "unread", unread_conversations, unread_messages}, {type: "error", message}. */
  onEvent?: (event: { type: string; [key: string]: unknown }) => void
  /** Switchboard's origin; defaults to the origin this script was loaded from. */
  origin?: string
}

export interface Handle {
  /** The iframe, once created (after the first token). */
  readonly iframe: HTMLIFrameElement | null
  /** Shows another conversation (component "conversation") or opens one in the inbox. */
  openConversation(id: string): void
  /** Removes the iframe and stops listening. */
  unmount(): void
}

const scriptOrigin = (() => {
  const s = document.currentScript as HTMLScriptElement | null
  try {
    return s?.src ? new URL(s.src).origin : location.origin
  } catch {
    return location.origin
  }
})()

const defaultHeights: Record<ComponentName, number | 'auto'> = { inbox: 600, conversation: 560, unread: 'auto' }

function accountOf(token: string): string {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')
    const claims = JSON.parse(atob(part + '==='.slice((part.length + 3) % 4)))
    return typeof claims.acct === 'string' ? claims.acct : ''
  } catch {
    return ''
  }
}

function mount(target: string | Element, opts: MountOptions): Handle {
  const el = typeof target === 'string' ? document.querySelector(target) : target
  if (!el) throw new Error(`Switchboard.mount: no element ${String(target)}`)
  if (!defaultHeights[opts.component]) throw new Error(`Switchboard.mount: unknown component ${opts.component}`)
  if (!opts.token && !opts.getToken) throw new Error('Switchboard.mount: give a token or getToken')
  const origin = (opts.origin || scriptOrigin).replace(/\/$/, '')
  const height = opts.height ?? defaultHeights[opts.component]
  const emit = (e: { type: string; [key: string]: unknown }) => {
    try {
      opts.onEvent?.(e)
    } catch (err) {
      console.error('Switchboard onEvent:', err)
    }
  }
  let iframe: HTMLIFrameElement | null = null
  let token = opts.token || ''
  let conversation = opts.conversationId || ''
  let gone = false

  const post = (msg: ToComponent) => iframe?.contentWindow?.postMessage(msg, origin)
  const fetchToken = async (): Promise<string> => {
    if (!opts.getToken) throw new Error('no getToken callback was given to Switchboard.mount')
    const t = await opts.getToken()
    if (typeof t !== 'string' || !t) throw new Error('getToken returned no token')
    return t
  }
  const onMessage = async (ev: MessageEvent) => {
    if (!iframe || ev.source !== iframe.contentWindow || ev.origin !== origin) return
    const msg = ev.data as FromComponent
    if (!msg || msg.sb !== 1) return
    switch (msg.type) {
      case 'ready':
        post({ sb: 1, type: 'token', token })
        if (conversation) post({ sb: 1, type: 'open-conversation', id: conversation })
        break
      case 'token-request':
        try {
          token = await fetchToken()
          post({ sb: 1, type: 'token', token })
        } catch (err) {
          post({ sb: 1, type: 'token-error', message: String((err as Error)?.message || err) })
          emit({ type: 'error', message: `could not get a new token: ${String((err as Error)?.message || err)}` })
        }
        break
      case 'resize':
        if (height === 'auto') {
          iframe.style.height = `${Math.max(1, Math.ceil(msg.height))}px`
          if (opts.component === 'unread') iframe.style.width = `${Math.max(1, Math.ceil(msg.width))}px`
        }
        break
      case 'event':
        emit(msg.event)
        break
    }
  }
  window.addEventListener('message', onMessage)

  const create = () => {
    if (gone) return
    const params = new URLSearchParams({ account: accountOf(token) })
    if (conversation && opts.component === 'conversation') params.set('conversation', conversation)
    iframe = document.createElement('iframe')
    iframe.src = `${origin}/embed/${opts.component}?${params}`
    iframe.title = { inbox: 'Inbox', conversation: 'Conversation', unread: 'Unread messages' }[opts.component]
    iframe.setAttribute('referrerpolicy', 'no-referrer')
    iframe.setAttribute('allow', 'autoplay')
    iframe.style.border = '0'
    iframe.style.display = 'block'
    iframe.style.colorScheme = 'normal'
    if (opts.component === 'unread') {
      // Sized by the badge once it knows its count. Never 0×0 (1×1 and transparent while there is
      // none): browsers stop running the updates of a cross-origin frame they deem hidden.
      iframe.style.width = '1px'
      iframe.style.height = '1px'
      iframe.style.display = 'inline-block'
      iframe.style.verticalAlign = 'middle'
      iframe.style.background = 'transparent'
      iframe.setAttribute('allowtransparency', 'true')
    } else {
      iframe.style.width = '100%'
      iframe.style.height = height === 'auto' ? '320px' : `${height}px`
    }
    el.appendChild(iframe)
  }
  if (token) create()
  else
    fetchToken().then(
      (t) => {
        token = t
        create()
      },
      (err) => emit({ type: 'error', message: `could not get a token: ${String(err?.message || err)}` }),
    )

  return {
    get iframe() {
      return iframe
    },
    openConversation(id: string) {
      conversation = id
      post({ sb: 1, type: 'open-conversation', id })
    },
    unmount() {
      gone = true
      window.removeEventListener('message', onMessage)
      iframe?.remove()
      iframe = null
    },
  }
}

// The page's handle on the loader: window.Switchboard.mount(element, options).
;(window as unknown as { Switchboard: unknown }).Switchboard = { mount, version: 1 }

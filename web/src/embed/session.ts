// The component's connection to Switchboard: its token (from the host page through the loader,
// or the deprecated ?user_id=&token= of the page URL), the component API, and the live stream.
// Tokens travel in the Authorization header only, never in a URL.
import type { FromComponent, ToComponent } from './protocol'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message)
  }
}

export type AuthState =
  | { kind: 'waiting' } // no token yet
  | { kind: 'ready' }
  | { kind: 'expired' } // refused; a new one was asked for
  | { kind: 'failed'; message: string } // no new token can be had

type Listener = () => void

function expiryOf(token: string): number {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')
    const exp = JSON.parse(atob(part + '==='.slice((part.length + 3) % 4))).exp
    return typeof exp === 'number' ? exp * 1000 : 0
  } catch {
    return 0
  }
}

export class Connection {
  state: AuthState = { kind: 'waiting' }
  private token = ''
  private publishable: { token: string; userId: string } | null = null
  private waiters: Array<() => void> = []
  private listeners = new Set<Listener>()
  private refreshTimer = 0
  private requested = false
  readonly framed = window.parent !== window
  /** The account the page was opened for (its frame-ancestors policy is that account's project's). */
  readonly account: string
  onOpenConversation: (id: string) => void = () => {}

  constructor(params: URLSearchParams) {
    this.account = params.get('account') || ''
    const token = params.get('token')
    const userId = params.get('user_id')
    if (token && userId) {
      // Deprecated publishable token: take it out of the address bar and of later referrers.
      this.publishable = { token, userId }
      const clean = new URL(location.href)
      clean.searchParams.delete('token')
      clean.searchParams.delete('user_id')
      history.replaceState(null, '', clean.pathname + clean.search)
      this.state = { kind: 'ready' }
    }
    window.addEventListener('message', (ev) => this.onMessage(ev))
    if (!this.publishable) {
      if (this.framed) this.post({ sb: 1, type: 'ready' })
      else this.setState({ kind: 'failed', message: 'This component shows inside an app: embed it with the Switchboard loader and a user token.' })
    }
  }

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  private setState(s: AuthState) {
    this.state = s
    this.listeners.forEach((fn) => fn())
  }

  /** Tells the host page something (through the loader's onEvent). */
  emit(event: { type: string; [key: string]: unknown }) {
    this.post({ sb: 1, type: 'event', event })
  }

  /** Asks the loader to size the iframe to this (when the host mounted it with height "auto"). */
  resize(height: number, width: number) {
    this.post({ sb: 1, type: 'resize', height, width })
  }

  private post(msg: FromComponent) {
    if (this.framed) window.parent.postMessage(msg, '*') // nothing secret: the parent's origin is not known here
  }

  private onMessage(ev: MessageEvent) {
    if (ev.source !== window.parent || this.publishable) return
    const msg = ev.data as ToComponent
    if (!msg || msg.sb !== 1) return
    switch (msg.type) {
      case 'token':
        this.setToken(msg.token)
        break
      case 'token-error':
        this.requested = false
        this.setState({ kind: 'failed', message: 'Your session has expired and the app could not renew it. Reload the page to continue.' })
        break
      case 'open-conversation':
        if (typeof msg.id === 'string') this.onOpenConversation(msg.id)
        break
    }
  }

  private setToken(token: string) {
    if (typeof token !== 'string' || !token) return
    const acct = (() => {
      try {
        const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')
        return JSON.parse(atob(part + '==='.slice((part.length + 3) % 4))).acct as string
      } catch {
        return ''
      }
    })()
    if (this.account && acct && acct !== this.account) {
      this.setState({ kind: 'failed', message: 'This token is for another account than the one this component was opened for.' })
      return
    }
    this.token = token
    this.requested = false
    clearTimeout(this.refreshTimer)
    const exp = expiryOf(token)
    if (exp) {
      const left = exp - Date.now()
      // Ask for the next token a minute before expiry (a quarter of the lifetime for short ones).
      const lead = Math.min(60_000, left / 4)
      if (left - lead > 0) this.refreshTimer = window.setTimeout(() => this.requestToken('expiring'), left - lead)
    }
    this.setState({ kind: 'ready' })
    const w = this.waiters
    this.waiters = []
    w.forEach((fn) => fn())
  }

  private requestToken(reason: 'expiring' | 'refused') {
    if (this.publishable) {
      this.setState({ kind: 'failed', message: 'The publishable token was refused: it may have been revoked.' })
      return
    }
    if (reason === 'refused') this.setState({ kind: 'expired' })
    if (this.requested) return
    this.requested = true
    this.post({ sb: 1, type: 'token-request', reason })
  }

  private untilToken(): Promise<void> {
    if (this.state.kind === 'ready' && (this.token || this.publishable)) return Promise.resolve()
    if (this.state.kind === 'failed') return Promise.reject(new ApiError(401, 'token_unavailable', this.state.message))
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  private headers(extra?: HeadersInit): Headers {
    const h = new Headers(extra)
    if (this.publishable) {
      h.set('Authorization', `Bearer ${this.publishable.token}`)
      h.set('Switchboard-User', this.publishable.userId)
    } else {
      h.set('Authorization', `Bearer ${this.token}`)
    }
    return h
  }

  /** Calls the component API; a refused token is renewed through the host page, then the call retried. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      await this.untilToken()
      const sent = this.token
      const res = await fetch(path, { ...init, headers: this.headers(init.headers), credentials: 'omit', cache: 'no-store' })
      if (res.status !== 401 || attempt >= 3) return res
      const body = await res.clone().json().catch(() => null)
      const type = body?.error?.type
      if (type !== 'token_expired' && type !== 'invalid_token') return res
      if (this.token === sent) this.requestToken('refused')
    }
  }

  /** Calls the component API and decodes its JSON answer; errors become ApiError. */
  async json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await this.fetch(path, init)
    const body = await res.json().catch(() => null)
    if (!res.ok) {
      throw new ApiError(res.status, body?.error?.type || 'error', body?.error?.message || `Request failed (${res.status})`)
    }
    return body as T
  }

  postJSON<T>(path: string, body: unknown): Promise<T> {
    return this.json<T>(path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } })
  }

  /**
   * Opens the live stream (Server-Sent Events read with fetch, which can send the Authorization
   * header that EventSource cannot). It reconnects after a drop with Last-Event-ID, so nothing is
   * missed. Returns a function that closes it.
   */
  live(onEvent: (type: string, data: unknown) => void): () => void {
    const ctl = new AbortController()
    let lastId = ''
    let retry = 2000
    const run = async () => {
      while (!ctl.signal.aborted) {
        try {
          const res = await this.fetch('/embed/api/stream', {
            signal: ctl.signal,
            headers: lastId ? { 'Last-Event-ID': lastId, Accept: 'text/event-stream' } : { Accept: 'text/event-stream' },
          })
          if (res.ok && res.body) {
            retry = 2000
            const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
            let buf = ''
            let event = 'message'
            let data = ''
            for (;;) {
              const { value, done } = await reader.read()
              if (done) break
              buf += value
              let nl: number
              while ((nl = buf.indexOf('\n')) >= 0) {
                const line = buf.slice(0, nl).replace(/\r$/, '')
                buf = buf.slice(nl + 1)
                if (line === '') {
                  if (data) {
                    try {
                      onEvent(event, JSON.parse(data))
                    } catch (err) {
                      console.error('switchboard: live event', err)
                    }
                  }
                  event = 'message'
                  data = ''
                } else if (line.startsWith('event:')) event = line.slice(6).trim()
                else if (line.startsWith('data:')) data += line.slice(5).trim()
                else if (line.startsWith('id:')) lastId = line.slice(3).trim()
                else if (line.startsWith('retry:')) retry = Number(line.slice(6)) || retry
              }
            }
          } else if (res.status === 401 && this.state.kind === 'failed') {
            return
          }
        } catch (err) {
          if (ctl.signal.aborted || (err instanceof ApiError && this.state.kind === 'failed')) return
        }
        onEvent('disconnected', {})
        await new Promise((r) => setTimeout(r, retry))
        retry = Math.min(retry * 2, 15000)
      }
    }
    run()
    return () => ctl.abort()
  }
}

// What one component page knows: conversations, threads and unread totals, kept current by the
// live stream. The components render from it and re-render when it changes.
import { useEffect, useState } from 'preact/hooks'
import type { Connection } from './session'
import type { Conversation, Item, Page, Unread } from './types'

export interface Thread {
  items: Map<string, Item>
  next: string | null
  loaded: boolean
  loading: boolean
  error: string
}

const activity = (c: Conversation) => c.last_activity_at || ''

export class State {
  conversations = new Map<string, Conversation>()
  /** The inbox list, most recent activity first. */
  list: string[] = []
  next: string | null = null
  listLoaded = false
  listLoading = false
  listError = ''
  search = ''
  threads = new Map<string, Thread>()
  unread: Unread | null = null
  private listeners = new Set<() => void>()
  private searchSeq = 0

  constructor(readonly conn: Connection) {}

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  changed() {
    this.listeners.forEach((fn) => fn())
  }

  private sortList() {
    this.list.sort((a, b) => activity(this.conversations.get(b)!).localeCompare(activity(this.conversations.get(a)!)))
  }

  /** Loads the first page of the inbox (for the current search), or the next one. */
  async loadList(more = false) {
    if (this.listLoading || (more && !this.next)) return
    const seq = ++this.searchSeq
    this.listLoading = true
    this.changed()
    try {
      const q = new URLSearchParams({ limit: '25' })
      if (this.search) q.set('q', this.search)
      if (more && this.next) q.set('after', this.next)
      const page = await this.conn.json<Page<Conversation>>(`/embed/api/conversations?${q}`)
      if (seq !== this.searchSeq) return
      if (!more) this.list = []
      for (const c of page.data) {
        this.conversations.set(c.id, c)
        if (!this.list.includes(c.id)) this.list.push(c.id)
      }
      this.next = page.pagination.next_cursor
      this.listLoaded = true
      this.listError = ''
    } catch (err) {
      if (seq === this.searchSeq) this.listError = (err as Error).message
    } finally {
      if (seq === this.searchSeq) {
        this.listLoading = false
        this.changed()
      }
    }
  }

  setSearch(q: string) {
    this.search = q.trim()
    this.listLoading = false
    this.next = null
    this.loadList()
  }

  thread(id: string): Thread {
    let t = this.threads.get(id)
    if (!t) {
      t = { items: new Map(), next: null, loaded: false, loading: false, error: '' }
      this.threads.set(id, t)
    }
    return t
  }

  async loadConversation(id: string) {
    try {
      const c = await this.conn.json<Conversation>(`/embed/api/conversations/${encodeURIComponent(id)}`)
      this.conversations.set(c.id, c)
    } catch (err) {
      this.thread(id).error = (err as Error).message
    }
    this.changed()
  }

  /** Loads the newest page of a thread, or the next older one. */
  async loadThread(id: string, more = false) {
    const t = this.thread(id)
    if (t.loading || (more && !t.next)) return
    t.loading = true
    this.changed()
    try {
      const q = new URLSearchParams({ limit: '30' })
      if (more && t.next) q.set('after', t.next)
      const page = await this.conn.json<Page<Item>>(`/embed/api/conversations/${encodeURIComponent(id)}/items?${q}`)
      for (const it of page.data) if (!t.items.has(it.id) || !more) t.items.set(it.id, it)
      t.next = page.pagination.next_cursor
      t.loaded = true
      t.error = ''
    } catch (err) {
      t.error = (err as Error).message
    } finally {
      t.loading = false
      this.changed()
    }
  }

  applyConversation(c: Conversation) {
    this.conversations.set(c.id, c)
    const matches = !this.search || c.contact.name.toLowerCase().includes(this.search.toLowerCase()) || c.contact.phone_number.includes(this.search)
    if (this.listLoaded && matches && !this.list.includes(c.id) && c.last_activity_at) this.list.push(c.id)
    this.sortList()
    this.changed()
  }

  applyItem(it: Item) {
    const t = this.threads.get(it.conversation_id)
    if (t?.loaded) {
      t.items.set(it.id, it)
      this.changed()
    }
  }

  applyUnread(u: Unread) {
    this.unread = u
    this.conn.emit({ type: 'unread', ...u })
    this.changed()
  }

  async loadUnread() {
    try {
      this.applyUnread(await this.conn.json<Unread>('/embed/api/unread'))
    } catch {
      // the live stream brings the totals too
    }
  }

  /** Reloads everything shown, after the live stream could not resume. */
  reload() {
    if (this.listLoaded) this.loadList()
    for (const [id, t] of this.threads) if (t.loaded) this.loadThread(id)
    this.loadUnread()
  }

  /** Follows the live stream. */
  follow(): () => void {
    return this.conn.live((type, data) => {
      switch (type) {
        case 'conversation':
          this.applyConversation(data as Conversation)
          break
        case 'message':
        case 'call':
          this.applyItem(data as Item)
          break
        case 'unread':
          this.applyUnread(data as Unread)
          break
        case 'reset':
          this.reload()
          break
      }
    })
  }
}

/** Re-renders the calling component whenever the state changes. */
export function useVersion(state: State): number {
  const [v, setV] = useState(0)
  useEffect(() => {
    const unsubscribe = state.subscribe(() => setV((n) => n + 1))
    setV((n) => n + 1) // what changed before the subscription
    return unsubscribe
  }, [state])
  return v
}

// What the shared inbox components show: the shapes both of their data sources fill. The
// components' API (web/embed-api.yaml) gives all of it; the console, reading the public API,
// gives what that has (no unread counts, no last message) and the components show less.
import { formatPhone } from '../format'

/** The contact of a conversation. */
export interface InboxContact {
  id: string
  phone_number: string
  /** The contact's display name (the components' API); without it, first and last names. */
  name?: string
  first_name?: string | null
  last_name?: string | null
  opted_out: boolean
}

/** A conversation as the list and the thread's header show it. */
export interface InboxConversation {
  id: string
  contact: InboxContact
  phone_number?: { number: string; name: string | null } | null
  last_message?: {
    direction: 'inbound' | 'outbound'
    body: string | null
    has_attachments: boolean
    created_at: string
  } | null
  last_call?: { status: string; duration: number; initiated_at: string } | null
  last_activity_at?: string | null
  unread_count?: number
  /** Whether the user may reply; absent means they may (a read-only thread never asks). */
  can_reply?: boolean
  reply_disabled_reason?: 'opted_out' | 'outbound_disabled' | null
}

export interface Attachment {
  id: string
  type: string
  url: string
}

/** One entry of a thread: a message or a call. */
export interface Item {
  kind: 'message' | 'call'
  id: string
  conversation_id: string
  created_at: string
  status: string
  direction?: 'inbound' | 'outbound'
  body?: string | null
  attachments?: Attachment[]
  failure_reason?: string | null
  delivered_at?: string | null
  failed_at?: string | null
  sent_by_user_id?: string
  auto_reply?: boolean
  /** SMS segments of the body (the public API's messages; the console shows them). */
  segments?: number
  duration?: number
  from?: string
  voicemail?: { id: string; duration: number; url: string }
}

/** How a contact is named: their name, or their number formatted. */
export function contactName(c: InboxContact): string {
  const n = c.name || [c.first_name, c.last_name].filter(Boolean).join(' ')
  return !n || n === c.phone_number ? formatPhone(c.phone_number) : n
}

const suffix = (id: string) => id.slice(id.indexOf('_') + 1)

/** Items in the ids' order, oldest first, as the server pages threads (TypeIDs of any kind
 * compare by their suffix). */
export function inOrder(items: Iterable<Item>): Item[] {
  return [...items].sort((a, b) => suffix(a.id).localeCompare(suffix(b.id)))
}

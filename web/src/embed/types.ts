// The component API's shapes (web/embed-api.yaml).

export interface Contact {
  id: string
  phone_number: string
  first_name: string | null
  last_name: string | null
  name: string
  opted_out: boolean
  outbound_disabled: boolean
}

export interface Conversation {
  id: string
  contact: Contact
  phone_number: { id: string; number: string; name: string | null; type: string }
  last_message: {
    id: string
    direction: 'inbound' | 'outbound'
    status: string
    body: string | null
    has_attachments: boolean
    created_at: string
  } | null
  last_call: { id: string; status: string; duration: number; initiated_at: string } | null
  last_activity_at: string | null
  unread_count: number
  can_reply: boolean
  reply_disabled_reason: 'opted_out' | 'outbound_disabled' | null
}

// A thread's items are the shared inbox's (src/ui/inbox/types.ts), which has them.
export type { Attachment, Item } from '../ui/inbox/types'

export interface Unread {
  unread_conversations: number
  unread_messages: number
}

export interface Session {
  user: { id: string; first_name: string; last_name: string | null }
  account: { id: string; name: string }
  deprecated_auth: boolean
}

export interface Page<T> {
  data: T[]
  pagination: { next_cursor: string | null; previous_cursor: string | null }
}

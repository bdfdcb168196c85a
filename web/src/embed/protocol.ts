// The messages the loader (in the host page) and a component (in its iframe) exchange with
// postMessage. Every message carries sb: 1. The loader only accepts messages from its iframe's
// window and Switchboard's origin; the component only from its parent window.

export type ComponentName = 'inbox' | 'conversation' | 'unread'

/** What a component tells the host page. */
export type FromComponent =
  | { sb: 1; type: 'ready' }
  | { sb: 1; type: 'token-request'; reason: 'expiring' | 'refused' }
  | { sb: 1; type: 'resize'; height: number; width: number }
  | { sb: 1; type: 'event'; event: { type: string; [key: string]: unknown } }

/** What the host page tells a component. */
export type ToComponent =
  | { sb: 1; type: 'token'; token: string }
  | { sb: 1; type: 'token-error'; message: string }
  | { sb: 1; type: 'open-conversation'; id: string }

// The console's building blocks on top of the shared ones (src/ui): page headers, tables, badges,
// dialogs, forms, and buttons that say why a role cannot press them. Everything shows text as
// text: nothing from a message, a webhook answer or a request is ever rendered as HTML.
import type { ComponentChildren, TargetedEvent } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError } from './api'
import type { Role } from './api'
import { canDo } from './api'

export function PageHeader({ title, subtitle, actions }: { title: string; subtitle?: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <div class="cx-page-header">
      <div>
        <h1>{title}</h1>
        {subtitle && <p class="cx-subtitle">{subtitle}</p>}
      </div>
      {actions && <div class="cx-actions">{actions}</div>}
    </div>
  )
}

export function Card({ title, actions, children, flush }: { title?: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren; flush?: boolean }) {
  return (
    <section class="cx-card">
      {(title || actions) && (
        <header class="cx-card-header">
          <h2>{title}</h2>
          {actions && <div class="cx-actions">{actions}</div>}
        </header>
      )}
      <div class={flush ? 'cx-card-flush' : 'cx-card-body'}>{children}</div>
    </section>
  )
}

type Tone = 'ok' | 'warn' | 'danger' | 'info' | 'muted'

export function Badge({ tone, children }: { tone: Tone; children: ComponentChildren }) {
  return <span class={`cx-badge cx-badge-${tone}`}>{children}</span>
}

const statusTones: Record<string, Tone> = {
  active: 'ok', delivered: 'ok', succeeded: 'ok', sent: 'ok', completed: 'ok', enabled: 'ok', ready: 'ok', received: 'info',
  pending: 'warn', queued: 'warn', sending: 'warn', in_review: 'warn', created: 'warn', scheduled: 'warn', incomplete: 'warn',
  failed: 'danger', rejected: 'danger', revoked: 'danger', disabled: 'danger', error: 'danger', canceled: 'muted', archived: 'muted',
}

/** A status word in its colour. */
export function Status({ value }: { value: string }) {
  return <Badge tone={statusTones[value] || 'muted'}>{value.replace(/_/g, ' ')}</Badge>
}

/** The colour of an HTTP status. */
export function HTTPStatus({ code }: { code: number }) {
  return <Badge tone={code >= 500 ? 'danger' : code >= 400 ? 'warn' : 'ok'}>{code}</Badge>
}

export function Table({ head, children, empty }: { head: ComponentChildren[]; children: ComponentChildren; empty?: ComponentChildren }) {
  const rows = Array.isArray(children) ? children.filter(Boolean) : children ? [children] : []
  return (
    <div class="cx-table-wrap">
      <table class="cx-table">
        <thead>
          <tr>
            {head.map((h, i) => (
              <th key={i}>{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length ? (
            rows
          ) : (
            <tr>
              <td colSpan={head.length} class="cx-empty-cell">
                {empty || 'Nothing here yet.'}
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  )
}

/** A button the role may not press is shown disabled, saying why; the server refuses it anyway. */
export function Action({
  role,
  need = 'developer',
  kind = 'primary',
  onClick,
  children,
  disabled,
  type = 'button',
  testid,
}: {
  role: Role
  need?: Role
  kind?: 'primary' | 'secondary' | 'danger' | 'ghost'
  onClick?: () => void
  children: ComponentChildren
  disabled?: boolean
  type?: 'button' | 'submit'
  testid?: string
}) {
  const allowed = canDo(role, need)
  return (
    <button
      type={type}
      class={`cx-btn cx-btn-${kind}`}
      disabled={!allowed || disabled}
      title={allowed ? undefined : `Your role on this project is ${role}: this needs ${need}.`}
      data-testid={testid}
      onClick={onClick}
    >
      {children}
    </button>
  )
}

export function Modal({ title, onClose, children, footer }: { title: string; onClose: () => void; children: ComponentChildren; footer?: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const key = (e: KeyboardEvent) => e.key === 'Escape' && onClose()
    window.addEventListener('keydown', key)
    // The first field of the body (not the header's close button), unless the user is already
    // typing in the dialog: this effect can run after the first keystroke.
    const dialog = ref.current
    if (dialog && !dialog.contains(document.activeElement)) {
      const first = dialog.querySelector<HTMLElement>('.cx-modal-body :is(input, select, textarea)') || dialog.querySelector<HTMLElement>('.cx-modal-footer button, button')
      first?.focus()
    }
    return () => window.removeEventListener('keydown', key)
  }, [])
  return (
    <div class="cx-modal-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class="cx-modal" role="dialog" aria-modal="true" aria-label={title} ref={ref}>
        <header class="cx-modal-header">
          <h2>{title}</h2>
          <button type="button" class="cx-icon-btn" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </header>
        <div class="cx-modal-body">{children}</div>
        {footer && <footer class="cx-modal-footer">{footer}</footer>}
      </div>
    </div>
  )
}

export function Field({ label, hint, children }: { label: string; hint?: ComponentChildren; children: ComponentChildren }) {
  return (
    <label class="cx-field">
      <span class="cx-label">{label}</span>
      {children}
      {hint && <span class="cx-hint">{hint}</span>}
    </label>
  )
}

/** A secret shown once, with a copy button. */
export function Secret({ value, testid }: { value: string; testid?: string }) {
  const [copied, setCopied] = useState(false)
  return (
    <div class="cx-secret">
      <code data-testid={testid}>{value}</code>
      <button
        type="button"
        class="cx-btn cx-btn-secondary"
        onClick={() => {
          navigator.clipboard?.writeText(value).then(() => setCopied(true), () => {})
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  )
}

export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null
  const msg = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error)
  return (
    <div class="cx-error" role="alert">
      {msg}
    </div>
  )
}

/** When: a local date and time, with the full ISO time on hover. */
export function When({ iso, empty = '—' }: { iso: string | null | undefined; empty?: string }) {
  if (!iso) return <span class="cx-faint">{empty}</span>
  const d = new Date(iso)
  return (
    <time dateTime={iso} title={d.toISOString()}>
      {d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit' })}
    </time>
  )
}

export function Mono({ children }: { children: ComponentChildren }) {
  return <code class="cx-mono">{children}</code>
}

/** Loads data for a view: the value, the error, and a reload. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; reload: () => void; loading: boolean } {
  const [data, setData] = useState<T>()
  const [error, setError] = useState<unknown>()
  const [loading, setLoading] = useState(true)
  const [n, setN] = useState(0)
  useEffect(() => {
    let live = true
    setLoading(true)
    load().then(
      (d) => {
        if (!live) return
        setData(d)
        setError(undefined)
        setLoading(false)
      },
      (e) => {
        if (!live) return
        setError(e)
        setLoading(false)
      },
    )
    return () => {
      live = false
    }
  }, [...deps, n])
  return { data, error, loading, reload: () => setN((x) => x + 1) }
}

/** Runs a change: busy while it runs, its error kept to show. */
export function useAction(): { busy: boolean; error: unknown; run: (fn: () => Promise<unknown>) => Promise<boolean>; clear: () => void } {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  return {
    busy,
    error,
    clear: () => setError(undefined),
    run: async (fn) => {
      setBusy(true)
      setError(undefined)
      try {
        await fn()
        return true
      } catch (e) {
        setError(e)
        return false
      } finally {
        setBusy(false)
      }
    },
  }
}

export function Tabs({ tabs, active, onChange }: { tabs: { id: string; label: string }[]; active: string; onChange: (id: string) => void }) {
  return (
    <nav class="cx-tabs" role="tablist">
      {tabs.map((t) => (
        <button key={t.id} type="button" role="tab" aria-selected={t.id === active} class={t.id === active ? 'cx-tab cx-tab-active' : 'cx-tab'} onClick={() => onChange(t.id)}>
          {t.label}
        </button>
      ))}
    </nav>
  )
}

export function Pager({ prev, next, onPrev, onNext }: { prev: boolean; next: boolean; onPrev: () => void; onNext: () => void }) {
  return (
    <div class="cx-pager">
      <button type="button" class="cx-btn cx-btn-secondary" disabled={!prev} onClick={onPrev}>
        ← Newer
      </button>
      <button type="button" class="cx-btn cx-btn-secondary" disabled={!next} onClick={onNext}>
        Older →
      </button>
    </div>
  )
}

export type InputEvent = TargetedEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, Event>

/** The value of an input's event. */
export const val = (e: InputEvent) => e.currentTarget.value

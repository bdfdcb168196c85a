// Small building blocks shared by the embedded components and the operator console.
import type { ComponentChildren } from 'preact'

const palette = ['#2563eb', '#7c3aed', '#db2777', '#ea580c', '#0d9488', '#16a34a', '#0891b2', '#9333ea', '#c2410c']

function hash(s: string): number {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0
  return Math.abs(h)
}

/** Initials of a name, or # for a bare number. */
export function initials(name: string): string {
  const words = name.replace(/[^\p{L}\p{N} ]/gu, ' ').trim().split(/\s+/).filter(Boolean)
  if (words.length === 0 || /^\d/.test(words[0])) return '#'
  return (words[0][0] + (words.length > 1 ? words[words.length - 1][0] : '')).toUpperCase()
}

export function Avatar({ name, seed, size = 36 }: { name: string; seed: string; size?: number }) {
  const letters = initials(name)
  return (
    <span
      class="sb-avatar"
      aria-hidden="true"
      style={{ width: `${size}px`, height: `${size}px`, fontSize: `${Math.round(size * 0.38)}px`, background: palette[hash(seed) % palette.length] }}
    >
      {letters === '#' ? (
        // A number without a name: a person's outline rather than letters.
        <svg width={Math.round(size * 0.5)} height={Math.round(size * 0.5)} viewBox="0 0 24 24" fill="currentColor" aria-hidden="true">
          <circle cx="12" cy="8" r="4.2" />
          <path d="M3.5 21c.7-4.4 4.2-7 8.5-7s7.8 2.6 8.5 7z" />
        </svg>
      ) : (
        letters
      )}
    </span>
  )
}

export function Spinner({ label = 'Loading' }: { label?: string }) {
  return <div class="sb-spinner" role="status" aria-label={label} />
}

export function EmptyState({ icon, title, children }: { icon?: ComponentChildren; title: string; children?: ComponentChildren }) {
  return (
    <div class="sb-center">
      {icon && <div class="sb-empty-icon">{icon}</div>}
      <div class="sb-empty-title">{title}</div>
      {children && <div class="sb-empty-text">{children}</div>}
    </div>
  )
}

export function Banner({ kind, children }: { kind: 'warn' | 'error'; children: ComponentChildren }) {
  return (
    <div class={`sb-banner sb-banner-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  )
}

type IconProps = { size?: number }
const svg = (size: number, d: ComponentChildren) => (
  <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">
    {d}
  </svg>
)

export const Icon = {
  chat: ({ size = 20 }: IconProps) => svg(size, <path d="M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z" />),
  search: ({ size = 16 }: IconProps) => svg(size, <><circle cx="11" cy="11" r="7" /><path d="m20 20-3.5-3.5" /></>),
  send: ({ size = 18 }: IconProps) => svg(size, <><path d="M22 2 11 13" /><path d="M22 2 15 22l-4-9-9-4z" /></>),
  paperclip: ({ size = 18 }: IconProps) =>
    svg(size, <path d="m21.44 11.05-9.19 9.19a6 6 0 0 1-8.49-8.49l9.19-9.19a4 4 0 0 1 5.66 5.66l-9.2 9.19a2 2 0 0 1-2.83-2.83l8.49-8.48" />),
  back: ({ size = 18 }: IconProps) => svg(size, <path d="m15 18-6-6 6-6" />),
  phone: ({ size = 16 }: IconProps) =>
    svg(size, <path d="M22 16.92v3a2 2 0 0 1-2.18 2 19.79 19.79 0 0 1-8.63-3.07 19.5 19.5 0 0 1-6-6 19.79 19.79 0 0 1-3.07-8.67A2 2 0 0 1 4.11 2h3a2 2 0 0 1 2 1.72c.13.96.36 1.9.7 2.81a2 2 0 0 1-.45 2.11L8.09 9.91a16 16 0 0 0 6 6l1.27-1.27a2 2 0 0 1 2.11-.45c.91.34 1.85.57 2.81.7A2 2 0 0 1 22 16.92z" />),
  alert: ({ size = 16 }: IconProps) => svg(size, <><circle cx="12" cy="12" r="10" /><path d="M12 8v4" /><path d="M12 16h.01" /></>),
  close: ({ size = 16 }: IconProps) => svg(size, <><path d="M18 6 6 18" /><path d="m6 6 12 12" /></>),
  file: ({ size = 16 }: IconProps) => svg(size, <><path d="M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8z" /><path d="M14 2v6h6" /></>),
}

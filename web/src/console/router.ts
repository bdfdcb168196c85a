// A small router over the History API: the console's pages are paths under /console/, which the
// server answers with the same page, so a reload or a shared link opens the same view.
import { useEffect, useState } from 'preact/hooks'

const listeners = new Set<() => void>()

window.addEventListener('popstate', () => listeners.forEach((fn) => fn()))

/** Opens a console path (/console/…), keeping the query if given. */
export function navigate(path: string, replace = false) {
  if (path === location.pathname + location.search) return
  if (replace) history.replaceState(null, '', path)
  else history.pushState(null, '', path)
  window.scrollTo(0, 0)
  listeners.forEach((fn) => fn())
}

/** The current path and query, re-rendering on every navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, set] = useState(0)
  useEffect(() => {
    const fn = () => set((n) => n + 1)
    listeners.add(fn)
    return () => listeners.delete(fn)
  }, [])
  return { path: location.pathname, query: new URLSearchParams(location.search) }
}

/** Matches a path against a pattern such as /console/p/:project/keys; null when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean)
  const s = path.split('/').filter(Boolean)
  if (p.length !== s.length) return null
  const out: Record<string, string> = {}
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) out[p[i].slice(1)] = decodeURIComponent(s[i])
    else if (p[i] !== s[i]) return null
  }
  return out
}

/** A link that navigates inside the console without reloading. */
export function linkProps(href: string) {
  return {
    href,
    onClick: (e: MouseEvent) => {
      if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
      e.preventDefault()
      navigate(href)
    },
  }
}

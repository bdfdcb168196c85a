// The console's client of its API (web/console-api.yaml): the session cookie travels by itself,
// every change carries the CSRF token, and errors arrive in the API's envelope.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly detail: Record<string, unknown> = {},
  ) {
    super(message)
  }

  /** The first message about a field of a validation error, or the error's own message. */
  field(name: string): string {
    const msgs = this.detail[name]
    return Array.isArray(msgs) && msgs.length ? `${name.replace(/_/g, ' ')} ${msgs[0]}` : ''
  }
}

export type Role = 'owner' | 'developer' | 'viewer'

export interface Me {
  user: { id: string; email: string; totp_enabled: boolean; password_change_required: boolean; last_login_at: string | null }
  csrf_token: string
  session_expires_at: string
  projects: { id: string; name: string; locked: boolean; role: Role }[]
  simulated_carrier: boolean
}

export interface Page<T> {
  data: T[]
  pagination: { next_cursor: string | null; previous_cursor: string | null }
}

const base = '/console/api'
let csrf = ''
let onSignedOut: () => void = () => {}

/** Keeps the CSRF token of the session (from sign-in and /me). */
export function setCSRF(token: string) {
  csrf = token
}

/** Says what to do when the session ends (expired, revoked, signed out elsewhere). */
export function whenSignedOut(fn: () => void) {
  onSignedOut = fn
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' }
  if (method !== 'GET') headers['X-CSRF-Token'] = csrf
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' })
  } catch {
    throw new ApiError(0, 'network', 'Switchboard cannot be reached. Check your connection and try again.')
  }
  if (res.status === 204) return undefined as T
  const text = await res.text()
  let json: any = null
  try {
    json = text ? JSON.parse(text) : null
  } catch {
    json = null
  }
  if (!res.ok) {
    const e = json?.error
    const err = new ApiError(res.status, e?.type || 'error', e?.message || `The server answered ${res.status}.`, e?.detail || {})
    if (res.status === 401 && path !== '/login' && (err.type === 'unauthenticated' || err.type === 'session_expired')) onSignedOut()
    throw err
  }
  return json as T
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body: unknown = {}) => request<T>('POST', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  del: <T>(path: string) => request<T>('DELETE', path),
}

/** A project's path in the console API. */
export const prj = (project: string, path = '') => `/projects/${encodeURIComponent(project)}${path}`

/** A public API path on a project, through the console's bridge. */
export const pub = (project: string, path: string) => `${prj(project)}/api${path}`

/** Query string of the set values of params. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s ? `?${s}` : ''
}

/** The rank of a role: a role may do what needs its rank or less. */
export function canDo(role: Role, need: Role): boolean {
  const rank = { viewer: 1, developer: 2, owner: 3 }
  return rank[role] >= rank[need]
}

// The console: sign-in, then the project's pages in a sidebar layout. Each page reads the console
// API with the signed-in user's role; buttons a role may not press are disabled, and the server
// refuses the request anyway.
import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { Spinner } from '../ui/components'
import type { Me, Role } from './api'
import { api, setCSRF, whenSignedOut } from './api'
import { AccountPage, AccountsPage } from './Accounts'
import { AuditPage } from './Audit'
import { KeysPage } from './Keys'
import { ChangePassword, Login } from './Login'
import { LogsPage } from './Logs'
import { MembersPage } from './Members'
import { linkProps, match, navigate, useLocation } from './router'
import { SettingsPage } from './Settings'
import { UsagePage } from './Usage'
import { WebhooksPage } from './Webhooks'

/** What every project page gets. */
export interface ProjectProps {
  project: string
  role: Role
  me: Me
  query: URLSearchParams
}

const nav: { path: string; label: string; icon: string }[] = [
  { path: 'accounts', label: 'Accounts', icon: '▦' },
  { path: 'keys', label: 'API keys', icon: '⚿' },
  { path: 'webhooks', label: 'Webhooks', icon: '⇄' },
  { path: 'logs', label: 'API logs', icon: '☰' },
  { path: 'usage', label: 'Usage', icon: '▤' },
  { path: 'members', label: 'Members', icon: '☺' },
  { path: 'audit', label: 'Audit log', icon: '✎' },
]

export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined)
  const loc = useLocation()

  const refresh = () =>
    api.get<Me>('/me').then(
      (m) => {
        setCSRF(m.csrf_token)
        setMe(m)
      },
      () => setMe(null),
    )

  useEffect(() => {
    whenSignedOut(() => setMe(null))
    refresh()
  }, [])

  if (me === undefined)
    return (
      <div class="cx-full-center">
        <Spinner />
      </div>
    )
  if (me === null)
    return (
      <Login
        onSignedIn={(m) => {
          setCSRF(m.csrf_token)
          setMe(m)
          if (!loc.path.startsWith('/console/p/')) navigate('/console/', true)
        }}
      />
    )
  if (me.user.password_change_required) return <ChangePassword me={me} onChanged={refresh} forced />

  const settings = match('/console/settings', loc.path)
  const m = match('/console/p/:project/:page', loc.path) || match('/console/p/:project/:page/:id', loc.path)
  const project = m ? me.projects.find((p) => p.id === m.project) : undefined
  if (!settings && !project) {
    if (me.projects.length) {
      navigate(`/console/p/${me.projects[0].id}/accounts`, true)
      return null
    }
    return (
      <Shell me={me} onSignOut={() => setMe(null)}>
        <NoProject onCreated={refresh} />
      </Shell>
    )
  }
  let page: ComponentChildren = null
  if (settings) page = <SettingsPage me={me} onChanged={refresh} />
  else if (project && m) {
    const props: ProjectProps = { project: project.id, role: project.role, me, query: loc.query }
    switch (m.page) {
      case 'accounts':
        page = m.id ? <AccountPage {...props} account={m.id} /> : <AccountsPage {...props} />
        break
      case 'keys':
        page = <KeysPage {...props} />
        break
      case 'webhooks':
        page = <WebhooksPage {...props} />
        break
      case 'logs':
        page = <LogsPage {...props} />
        break
      case 'usage':
        page = <UsagePage {...props} />
        break
      case 'members':
        page = <MembersPage {...props} onChanged={refresh} />
        break
      case 'audit':
        page = <AuditPage {...props} />
        break
      default:
        page = <div class="cx-card-body">No such page.</div>
    }
  }
  return (
    <Shell me={me} project={project?.id} page={m?.page} onSignOut={() => setMe(null)} onProjectsChanged={refresh}>
      {project?.locked && (
        <div class="cx-locked" role="status">
          This project is locked: its API keys are refused with 403 platform_locked until an owner unlocks it.
        </div>
      )}
      {page}
    </Shell>
  )
}

function Shell({
  me,
  project,
  page,
  children,
  onSignOut,
  onProjectsChanged,
}: {
  me: Me
  project?: string
  page?: string
  children: ComponentChildren
  onSignOut: () => void
  onProjectsChanged?: () => void
}) {
  const current = me.projects.find((p) => p.id === project)
  return (
    <div class="cx-shell">
      <aside class="cx-sidebar">
        <a class="cx-brand" {...linkProps('/console/')}>
          <span class="cx-logo" aria-hidden="true">
            S
          </span>
          Switchboard
        </a>
        <label class="cx-project-picker">
          <span class="cx-label">Project</span>
          <select
            value={project || ''}
            data-testid="project-picker"
            onChange={(e) => {
              const v = e.currentTarget.value
              if (v === '+') {
                const name = prompt('Name of the new project')
                if (name)
                  api.post<{ id: string }>('/projects', { name }).then((p) => {
                    onProjectsChanged?.()
                    navigate(`/console/p/${p.id}/accounts`)
                  })
                else e.currentTarget.value = project || ''
                return
              }
              navigate(`/console/p/${v}/${page || 'accounts'}`)
            }}
          >
            {!project && <option value="">Choose a project</option>}
            {me.projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
            <option value="+">+ New project…</option>
          </select>
          {current && <span class="cx-role">Your role: {current.role}</span>}
        </label>
        {project && (
          <nav class="cx-nav">
            {nav.map((n) => (
              <a key={n.path} class={page === n.path ? 'cx-nav-item cx-nav-active' : 'cx-nav-item'} {...linkProps(`/console/p/${project}/${n.path}`)}>
                <span class="cx-nav-icon" aria-hidden="true">
                  {n.icon}
                </span>
                {n.label}
              </a>
            ))}
          </nav>
        )}
        <div class="cx-sidebar-foot">
          <a class="cx-nav-item" {...linkProps('/console/settings')}>
            <span class="cx-nav-icon" aria-hidden="true">
              ⚙
            </span>
            Your account
          </a>
          <div class="cx-whoami" title={me.user.email}>
            {me.user.email}
          </div>
          <button
            type="button"
            class="cx-btn cx-btn-ghost cx-signout"
            onClick={() => api.post('/logout').finally(onSignOut)}
          >
            Sign out
          </button>
        </div>
      </aside>
      <main class="cx-main">{children}</main>
    </div>
  )
}

function NoProject({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('')
  const [err, setErr] = useState('')
  return (
    <div class="cx-narrow">
      <h1>Create your first project</h1>
      <p class="cx-subtitle">A project holds API keys, webhooks and the accounts you send for.</p>
      <form
        class="cx-form"
        onSubmit={(e) => {
          e.preventDefault()
          api.post('/projects', { name }).then(onCreated, (x) => setErr(x.message))
        }}
      >
        <input class="cx-input" value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="Acme Holdings" required />
        <button class="cx-btn cx-btn-primary" type="submit">
          Create project
        </button>
        {err && <div class="cx-error">{err}</div>}
      </form>
    </div>
  )
}

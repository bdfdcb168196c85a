// The signed-in user's own account: password, two-factor authentication, sessions.
import { useState } from 'preact/hooks'
import type { Me, Page } from './api'
import { api } from './api'
import { Badge, Card, ErrorText, Field, PageHeader, Table, When, useAction, useLoad } from './kit'
import { ChangePassword } from './Login'

interface Session {
  id: string
  ip: string
  user_agent: string
  created_at: string
  last_seen_at: string
  expires_at: string
  current: boolean
}

export function SettingsPage({ me, onChanged }: { me: Me; onChanged: () => void }) {
  const sessions = useLoad(() => api.get<Page<Session>>('/me/sessions'), [])
  const act = useAction()
  return (
    <div class="cx-page">
      <PageHeader title="Your account" subtitle={me.user.email} />
      <div class="cx-grid-2">
        <Card title="Password">
          <ChangePassword me={me} onChanged={onChanged} />
        </Card>
        <Card title="Two-factor authentication">
          <TOTP me={me} onChanged={onChanged} />
        </Card>
      </div>
      <Card title="Signed-in sessions" flush>
        <ErrorText error={sessions.error || act.error} />
        <Table head={['Browser', 'Address', 'Signed in', 'Last seen', 'Expires', '']}>
          {sessions.data?.data.map((s) => (
            <tr key={s.id}>
              <td class="cx-ellipsis" title={s.user_agent}>
                {s.user_agent || 'Unknown'} {s.current && <Badge tone="info">this browser</Badge>}
              </td>
              <td>{s.ip}</td>
              <td>
                <When iso={s.created_at} />
              </td>
              <td>
                <When iso={s.last_seen_at} />
              </td>
              <td>
                <When iso={s.expires_at} />
              </td>
              <td class="cx-right">
                {!s.current && (
                  <button type="button" class="cx-btn cx-btn-secondary" onClick={() => act.run(() => api.del(`/me/sessions/${s.id}`)).then(sessions.reload)}>
                    Sign out
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      </Card>
    </div>
  )
}

function TOTP({ me, onChanged }: { me: Me; onChanged: () => void }) {
  const [setup, setSetup] = useState<{ secret: string; qr_code: string } | null>(null)
  const [code, setCode] = useState('')
  const [password, setPassword] = useState('')
  const act = useAction()
  if (me.user.totp_enabled)
    return (
      <div class="cx-form">
        <p>
          <Badge tone="ok">On</Badge> Signing in asks for your authenticator's code.
        </p>
        <Field label="Password, to turn it off">
          <input class="cx-input" type="password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <ErrorText error={act.error} />
        <button type="button" class="cx-btn cx-btn-danger" onClick={() => act.run(() => api.post('/me/totp/disable', { password })).then((ok) => ok && onChanged())}>
          Turn off
        </button>
      </div>
    )
  if (!setup)
    return (
      <div class="cx-form">
        <p class="cx-subtitle">Protect your account with a code from an authenticator app (Google Authenticator, 1Password, Authy…).</p>
        <ErrorText error={act.error} />
        <button type="button" class="cx-btn cx-btn-primary" onClick={() => act.run(async () => setSetup(await api.post('/me/totp')))}>
          Set up an authenticator
        </button>
      </div>
    )
  return (
    <form
      class="cx-form"
      onSubmit={(e) => {
        e.preventDefault()
        act.run(() => api.post('/me/totp/confirm', { code })).then((ok) => ok && onChanged())
      }}
    >
      <div class="cx-totp">
        <img src={setup.qr_code} width={160} height={160} alt="QR code for your authenticator app" />
        <div>
          <p>Scan the code, or type this key:</p>
          <code class="cx-mono">{setup.secret}</code>
        </div>
      </div>
      <Field label="The code the app shows">
        <input class="cx-input" inputMode="numeric" value={code} onInput={(e) => setCode(e.currentTarget.value)} required />
      </Field>
      <ErrorText error={act.error} />
      <button type="submit" class="cx-btn cx-btn-primary">
        Turn on
      </button>
    </form>
  )
}

// Sign-in (with the authenticator's code when the user has one) and the password change a
// one-time password requires.
import { useState } from 'preact/hooks'
import type { Me } from './api'
import { ApiError, api } from './api'
import { Field } from './kit'

export function Login({ onSignedIn }: { onSignedIn: (m: Me) => void }) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [code, setCode] = useState('')
  const [needCode, setNeedCode] = useState(false)
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  return (
    <div class="cx-auth">
      <form
        class="cx-auth-card"
        data-testid="login-form"
        onSubmit={async (e) => {
          e.preventDefault()
          setBusy(true)
          setError('')
          try {
            onSignedIn(await api.post<Me>('/login', { email, password, ...(needCode ? { totp_code: code } : {}) }))
          } catch (x) {
            if (x instanceof ApiError && x.type === 'totp_required') {
              setNeedCode(true)
            } else setError(x instanceof Error ? x.message : String(x))
          } finally {
            setBusy(false)
          }
        }}
      >
        <div class="cx-auth-brand">
          <span class="cx-logo" aria-hidden="true">
            S
          </span>
          <span>Switchboard</span>
        </div>
        <h1>Sign in to the console</h1>
        <p class="cx-subtitle">Manage API keys, webhooks, accounts and usage.</p>
        <Field label="Email">
          <input class="cx-input" type="email" name="email" autocomplete="username" value={email} onInput={(e) => setEmail(e.currentTarget.value)} required />
        </Field>
        <Field label="Password">
          <input
            class="cx-input"
            type="password"
            name="password"
            autocomplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
          />
        </Field>
        {needCode && (
          <Field label="Authenticator code" hint="The 6-digit code your authenticator app shows for Switchboard.">
            <input class="cx-input" name="totp" inputMode="numeric" autocomplete="one-time-code" value={code} onInput={(e) => setCode(e.currentTarget.value)} required />
          </Field>
        )}
        {error && (
          <div class="cx-error" role="alert">
            {error}
          </div>
        )}
        <button class="cx-btn cx-btn-primary cx-btn-block" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="cx-faint cx-small">No account? An owner of a project adds you, or on the server: switchboard console user create.</p>
      </form>
    </div>
  )
}

export function ChangePassword({ me, onChanged, forced }: { me: Me; onChanged: () => void; forced?: boolean }) {
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [again, setAgain] = useState('')
  const [error, setError] = useState('')
  const [done, setDone] = useState(false)
  const form = (
    <form
      class={forced ? 'cx-auth-card' : 'cx-form'}
      data-testid="password-form"
      onSubmit={async (e) => {
        e.preventDefault()
        setError('')
        if (next !== again) {
          setError('The two new passwords differ.')
          return
        }
        try {
          await api.post('/me/password', { current_password: current, new_password: next })
          setCurrent('')
          setNext('')
          setAgain('')
          setDone(true)
          onChanged()
        } catch (x) {
          setError(x instanceof ApiError ? x.field('new_password') || x.field('current_password') || x.message : String(x))
        }
      }}
    >
      {forced && (
        <>
          <h1>Choose your password</h1>
          <p class="cx-subtitle">
            You signed in as {me.user.email} with a one-time password. Choose your own (at least 12 characters) to go on.
          </p>
        </>
      )}
      <Field label={forced ? 'One-time password' : 'Current password'}>
        <input class="cx-input" type="password" autocomplete="current-password" value={current} onInput={(e) => setCurrent(e.currentTarget.value)} required />
      </Field>
      <Field label="New password" hint="At least 12 characters.">
        <input class="cx-input" type="password" autocomplete="new-password" value={next} onInput={(e) => setNext(e.currentTarget.value)} required />
      </Field>
      <Field label="New password again">
        <input class="cx-input" type="password" autocomplete="new-password" value={again} onInput={(e) => setAgain(e.currentTarget.value)} required />
      </Field>
      {error && (
        <div class="cx-error" role="alert">
          {error}
        </div>
      )}
      {done && !forced && <div class="cx-ok">Password changed. Your other sessions were signed out.</div>}
      <button class="cx-btn cx-btn-primary" type="submit">
        Change password
      </button>
    </form>
  )
  return forced ? <div class="cx-auth">{form}</div> : form
}

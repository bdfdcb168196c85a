// The project's members and their roles; owners add people (a new one gets a one-time password,
// shown once), change roles and remove members.
import { useState } from 'preact/hooks'
import type { ProjectProps } from './App'
import type { Page, Role } from './api'
import { api, canDo, prj } from './api'
import { Action, Badge, Card, ErrorText, Field, Modal, PageHeader, Secret, Table, When, useAction, useLoad, val } from './kit'

interface Member {
  user_id: string
  email: string
  role: Role
  totp_enabled: boolean
  last_login_at: string | null
  created_at: string
}

const roleText: Record<Role, string> = {
  owner: 'Everything, including members and the project lock',
  developer: 'Keys, webhooks, numbers, accounts and campaigns',
  viewer: 'Reads everything, changes nothing',
}

export function MembersPage({ project, role, me, onChanged }: ProjectProps & { onChanged: () => void }) {
  const members = useLoad(() => api.get<Page<Member>>(prj(project, '/members')), [project])
  const [adding, setAdding] = useState(false)
  const [added, setAdded] = useState<{ email: string; password: string } | null>(null)
  const act = useAction()
  const owner = canDo(role, 'owner')
  return (
    <div class="cx-page">
      <PageHeader
        title="Members"
        subtitle="People who sign in to this console, with their role on this project."
        actions={
          <Action role={role} need="owner" onClick={() => setAdding(true)}>
            Add member
          </Action>
        }
      />
      <ErrorText error={members.error || act.error} />
      <Card flush>
        <Table head={['Member', 'Role', '2FA', 'Last sign-in', 'Member since', '']}>
          {members.data?.data.map((m) => (
            <tr key={m.user_id}>
              <td>
                {m.email} {m.user_id === me.user.id && <Badge tone="info">you</Badge>}
              </td>
              <td>
                {owner ? (
                  <select
                    class="cx-input cx-input-sm"
                    value={m.role}
                    aria-label={`Role of ${m.email}`}
                    onChange={(e) => act.run(() => api.patch(prj(project, `/members/${m.user_id}`), { role: val(e) })).then(() => (members.reload(), onChanged()))}
                  >
                    {(['owner', 'developer', 'viewer'] as Role[]).map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                ) : (
                  <Badge tone={m.role === 'owner' ? 'info' : 'muted'}>{m.role}</Badge>
                )}
              </td>
              <td>{m.totp_enabled ? <Badge tone="ok">on</Badge> : <span class="cx-faint">off</span>}</td>
              <td>
                <When iso={m.last_login_at} empty="Never" />
              </td>
              <td>
                <When iso={m.created_at} />
              </td>
              <td class="cx-right">
                <Action
                  role={role}
                  need="owner"
                  kind="ghost"
                  onClick={() => confirm(`Remove ${m.email} from this project?`) && act.run(() => api.del(prj(project, `/members/${m.user_id}`))).then(() => (members.reload(), onChanged()))}
                >
                  Remove
                </Action>
              </td>
            </tr>
          ))}
        </Table>
      </Card>
      <Card title="Roles">
        <dl class="cx-dl">
          {(Object.keys(roleText) as Role[]).map((r) => (
            <>
              <dt>{r}</dt>
              <dd>{roleText[r]}</dd>
            </>
          ))}
        </dl>
      </Card>
      {adding && (
        <AddMember
          project={project}
          onClose={() => setAdding(false)}
          onAdded={(email, password) => {
            setAdding(false)
            members.reload()
            if (password) setAdded({ email, password })
          }}
        />
      )}
      {added && (
        <Modal title="Member added" onClose={() => setAdded(null)}>
          <p>
            Give {added.email} this one-time password. They choose their own when they first sign in; it is not shown again.
          </p>
          <Secret value={added.password} />
        </Modal>
      )}
    </div>
  )
}

function AddMember({ project, onClose, onAdded }: { project: string; onClose: () => void; onAdded: (email: string, password: string | null) => void }) {
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<Role>('developer')
  const act = useAction()
  return (
    <Modal
      title="Add a member"
      onClose={onClose}
      footer={
        <button
          type="button"
          class="cx-btn cx-btn-primary"
          disabled={act.busy}
          onClick={() =>
            act.run(async () => {
              const r = await api.post<Member & { one_time_password: string | null }>(prj(project, '/members'), { email, role })
              onAdded(r.email, r.one_time_password)
            })
          }
        >
          Add
        </button>
      }
    >
      <Field label="Email">
        <input class="cx-input" type="email" value={email} onInput={(e) => setEmail(val(e))} />
      </Field>
      <Field label="Role" hint={roleText[role]}>
        <select class="cx-input" value={role} onChange={(e) => setRole(val(e) as Role)}>
          <option value="owner">owner</option>
          <option value="developer">developer</option>
          <option value="viewer">viewer</option>
        </select>
      </Field>
      <ErrorText error={act.error} />
    </Modal>
  )
}

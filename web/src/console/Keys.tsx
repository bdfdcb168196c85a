// API keys: create (the secret is shown once), list with their last use, revoke; the project's
// lock for its owners.
import { useState } from 'preact/hooks'
import type { ProjectProps } from './App'
import type { Page } from './api'
import { api, canDo, prj } from './api'
import { Action, Badge, Card, ErrorText, Modal, Mono, PageHeader, Secret, Table, When, useAction, useLoad } from './kit'

export interface Key {
  id: string
  kind: 'live' | 'demo'
  demo: boolean
  prefix: string
  hint: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

export function KeysPage({ project, role, me }: ProjectProps) {
  const keys = useLoad(() => api.get<Page<Key>>(prj(project, '/keys')), [project])
  const [created, setCreated] = useState<(Key & { secret: string }) | null>(null)
  const [revoking, setRevoking] = useState<Key | null>(null)
  const act = useAction()
  const locked = me.projects.find((p) => p.id === project)?.locked
  const create = (demo: boolean) =>
    act.run(async () => {
      setCreated(await api.post(prj(project, '/keys'), { demo }))
      keys.reload()
    })
  return (
    <div class="cx-page">
      <PageHeader
        title="API keys"
        subtitle="Keys authenticate your servers to the API as this project. A secret is shown once, when the key is created."
        actions={
          <>
            <Action role={role} kind="secondary" onClick={() => create(true)} testid="create-demo-key">
              Create demo key
            </Action>
            <Action role={role} onClick={() => create(false)} testid="create-key">
              Create live key
            </Action>
          </>
        }
      />
      <ErrorText error={keys.error || act.error} />
      <Card flush>
        <Table head={['Key', 'Type', 'Created', 'Last used', 'Status', '']} empty="No keys yet: create one to call the API.">
          {keys.data?.data.map((k) => (
            <tr key={k.id} data-key={k.id}>
              <td>
                <Mono>{k.hint}</Mono>
                <div class="cx-faint cx-small">{k.id}</div>
              </td>
              <td>{k.demo ? <Badge tone="warn">demo</Badge> : <Badge tone="info">live</Badge>}</td>
              <td>
                <When iso={k.created_at} />
              </td>
              <td data-testid="last-used">
                <When iso={k.last_used_at} empty="Never" />
              </td>
              <td>{k.revoked_at ? <Badge tone="danger">revoked</Badge> : <Badge tone="ok">active</Badge>}</td>
              <td class="cx-right">
                {!k.revoked_at && (
                  <Action role={role} kind="secondary" onClick={() => setRevoking(k)} testid="revoke-key">
                    Revoke
                  </Action>
                )}
              </td>
            </tr>
          ))}
        </Table>
      </Card>
      {canDo(role, 'owner') && (
        <Card title="Project lock">
          <div class="cx-row-between">
            <p class="cx-subtitle">
              {locked
                ? 'The project is locked: every key is refused with 403 platform_locked.'
                : 'Locking the project refuses every key with 403 platform_locked at once, until it is unlocked.'}
            </p>
            <Action
              role={role}
              need="owner"
              kind={locked ? 'secondary' : 'danger'}
              onClick={() => act.run(() => api.post(prj(project, locked ? '/unlock' : '/lock'))).then(() => location.reload())}
            >
              {locked ? 'Unlock project' : 'Lock project'}
            </Action>
          </div>
        </Card>
      )}
      {created && (
        <Modal
          title={created.demo ? 'Demo key created' : 'Live key created'}
          onClose={() => setCreated(null)}
          footer={
            <button type="button" class="cx-btn cx-btn-primary" onClick={() => setCreated(null)}>
              I have stored it
            </button>
          }
        >
          <p>Copy the secret now: Switchboard keeps only its hash and cannot show it again.</p>
          <Secret value={created.secret} testid="new-key-secret" />
          {created.demo && <p class="cx-faint cx-small">Demo keys only send through the shared demo number, 25 messages per account.</p>}
        </Modal>
      )}
      {revoking && (
        <Modal
          title="Revoke this key?"
          onClose={() => setRevoking(null)}
          footer={
            <>
              <button type="button" class="cx-btn cx-btn-secondary" onClick={() => setRevoking(null)}>
                Cancel
              </button>
              <Action
                role={role}
                kind="danger"
                testid="confirm-revoke"
                onClick={() =>
                  act.run(() => api.post(prj(project, `/keys/${revoking.id}/revoke`))).then(() => {
                    setRevoking(null)
                    keys.reload()
                  })
                }
              >
                Revoke key
              </Action>
            </>
          }
        >
          <p>
            Requests with <Mono>{revoking.hint}</Mono> will be refused with 401 invalid_api_key at once. This cannot be undone.
          </p>
        </Modal>
      )}
    </div>
  )
}

/**
 * Settings, Webhooks: the account's subscriptions (the events of its
 * projects POSTed, signed, to a URL), made, edited, turned off and on, and
 * deleted here; the new one's signing secret shown once; and each one's
 * delivery log (the last 30 days, with every attempt), any delivery sent
 * again with Redeliver.
 */
import { useState } from 'preact/hooks';
import { allPages, answer, type Schemas } from '../api.ts';
import { useSession } from '../session.ts';
import { FormError, formatTime } from '../ui.tsx';
import { ActionButton, checkForm, FocusedHeading, ListState, useLoaded } from './common.tsx';

type Webhook = Schemas['Webhook'];
type EventType = Schemas['WebhookEventType'];
type Delivery = Schemas['WebhookDelivery'];

const EVENTS: Array<[EventType, string]> = [
  ['player.created', 'A player is made'],
  ['player.updated', 'A player changes'],
  ['project.created', 'A project is made'],
  ['project.updated', 'A project changes'],
  ['comment.created', 'Someone comments'],
  ['comment.updated', 'A comment changes'],
  ['upload.started', 'An upload starts'],
  ['upload.completed', 'An upload ends'],
  ['upload.failed', 'An upload fails'],
  ['file.processed', 'A file is analysed'],
  ['file.processing_failed', 'A file’s analysis fails'],
];

/** The fields of a new or an edited subscription; `prefix` keeps the ids of two forms on one page apart. */
function WebhookFields({ prefix, webhook }: { prefix: string; webhook?: Webhook }) {
  return (
    <>
      <div class="field">
        <label for={`${prefix}-label`}>Label</label>
        <input id={`${prefix}-label`} name="label" type="text" maxLength={200} autoComplete="off" defaultValue={webhook?.label ?? ''} placeholder="Mastering queue" />
      </div>
      <div class="field">
        <label for={`${prefix}-url`}>URL</label>
        <input id={`${prefix}-url`} name="url" type="url" required maxLength={2000} autoComplete="off" spellcheck={false} defaultValue={webhook?.url ?? ''} placeholder="https://hooks.example.com/audio-share" />
      </div>
      <fieldset>
        <legend>Events</legend>
        <div class="event-grid">
          {EVENTS.map(([type, what]) => (
            <label key={type} class="check">
              <input type="checkbox" name="events" value={type} defaultChecked={webhook?.events.includes(type) ?? false} /> <code>{type}</code> <span>{what}</span>
            </label>
          ))}
        </div>
      </fieldset>
    </>
  );
}

function formBody(form: HTMLFormElement): { label: string; url: string; events: EventType[] } {
  const data = new FormData(form);
  return { label: String(data.get('label') ?? '').trim(), url: String(data.get('url') ?? '').trim(), events: data.getAll('events').map(String) as EventType[] };
}

const STATUS: Record<Delivery['status'], string> = { pending: 'Pending', succeeded: 'Delivered', failed: 'Failed', cancelled: 'Cancelled' };

function Deliveries({ webhook }: { webhook: Webhook }) {
  const { studio } = useSession();
  const path = { webhookid: webhook.id };
  const deliveries = useLoaded(() => answer(studio.client.GET('/webhooks/{webhookid}/deliveries', { params: { path, query: { limit: 50 } } })));
  const [error, setError] = useState<string>();
  const headingId = `deliveries-${webhook.id}`;
  return (
    <div class="deliveries">
      <div class="page-head">
        <h4 id={headingId}>Deliveries</h4>
        <button type="button" class="secondary small" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      <p class="hint">A delivery still pending is retried by itself; one that succeeded or failed can be sent again.</p>
      <FormError id={`${headingId}-error`} message={error} />
      <ul class="items" aria-labelledby={headingId}>
        <ListState error={deliveries.error} loading={!deliveries.data} />
        {deliveries.data?.length === 0 ? <li class="empty">Nothing delivered in the last 30 days.</li> : null}
        {deliveries.data?.map((delivery) => {
          const last = delivery.attempts.at(-1);
          const id = `delivery-${delivery.id}`;
          return (
            <li key={delivery.id} class="item">
              <div class="item-text" id={id}>
                <strong>
                  <code>{delivery.type}</code> · {STATUS[delivery.status]}
                </strong>
                <span class="meta">
                  {[
                    formatTime(delivery.timeCreated),
                    `${delivery.attempts.length} ${delivery.attempts.length === 1 ? 'attempt' : 'attempts'}`,
                    last ? (last.error ?? `answered ${last.statusCode}`) : '',
                    delivery.nextAttempt ? `next ${formatTime(delivery.nextAttempt)}` : '',
                  ]
                    .filter(Boolean)
                    .join(' · ')}
                </span>
              </div>
              <div class="item-actions">
                <ActionButton
                  describedBy={id}
                  disabled={delivery.status === 'pending'}
                  action={() => answer(studio.client.POST('/webhooks/{webhookid}/deliveries/{deliveryid}/redeliver', { params: { path: { webhookid: webhook.id, deliveryid: delivery.id } } }))}
                  onRefused={setError}
                  onDone={deliveries.reload}
                >
                  Redeliver
                </ActionButton>
              </div>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

function WebhookRow({ webhook, reload }: { webhook: Webhook; reload: () => Promise<void> }) {
  const { studio } = useSession();
  const [editing, setEditing] = useState(false);
  const [log, setLog] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const path = { webhookid: webhook.id };
  const id = `webhook-${webhook.id}`;
  const name = webhook.label || webhook.url;
  const save = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const invalid = checkForm(form);
    if (invalid) return setError(invalid);
    const body = formBody(form);
    if (body.events.length === 0) return setError('Choose at least one event to deliver.');
    setBusy(true);
    const saved = await answer(studio.client.POST('/webhooks/{webhookid}', { params: { path }, body: { ...body, enabled: new FormData(form).get('enabled') === 'on' } }));
    setBusy(false);
    if (!saved.ok) return setError(saved.refusal.detail);
    setError(undefined);
    setEditing(false);
    await reload();
  };
  return (
    <li class="item webhook">
      <div class="item-text" id={id}>
        <strong>{name}</strong>
        <span class="meta url">{webhook.url}</span>
        <span class="meta">
          {webhook.enabled ? 'On' : webhook.disabledReason ? `Off: ${webhook.disabledReason}` : 'Off'} · {webhook.events.join(', ')}
        </span>
      </div>
      <div class="item-actions">
        <button type="button" class="secondary small" aria-describedby={id} aria-expanded={editing} onClick={() => setEditing(!editing)}>
          Edit
        </button>
        <button type="button" class="secondary small" aria-describedby={id} aria-expanded={log} onClick={() => setLog(!log)}>
          Delivery log
        </button>
        <ActionButton describedBy={id} action={() => answer(studio.client.DELETE('/webhooks/{webhookid}', { params: { path } }))} onRefused={setError} onDone={reload}>
          Delete
        </ActionButton>
      </div>
      <FormError id={`${id}-error`} message={error} />
      {editing ? (
        <form class="webhook-form" noValidate onSubmit={save} aria-label={`Edit ${name}`}>
          <WebhookFields prefix={`edit-${webhook.id}`} webhook={webhook} />
          <label class="check">
            <input type="checkbox" name="enabled" defaultChecked={webhook.enabled} /> Deliver events (on)
          </label>
          <div class="actions">
            <button type="submit" class="small" disabled={busy}>
              Save
            </button>
            <button type="button" class="secondary small" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      {log ? <Deliveries webhook={webhook} /> : null}
    </li>
  );
}

export function WebhooksTab() {
  const { studio } = useSession();
  const webhooks = useLoaded(() => allPages((cursor) => studio.client.GET('/webhooks', { params: { query: { limit: 100, cursor } } })));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [secret, setSecret] = useState<string>();
  const create = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const invalid = checkForm(form);
    if (invalid) return setError(invalid);
    const body = formBody(form);
    if (body.events.length === 0) return setError('Choose at least one event to deliver.');
    setBusy(true);
    const made = await answer(studio.client.POST('/webhooks', { body }));
    setBusy(false);
    if (!made.ok) return setError(made.refusal.detail);
    setError(undefined);
    form.reset();
    setSecret(made.data.secret);
    await webhooks.reload();
  };
  return (
    <>
      <section aria-labelledby="webhooks-heading">
        <h2 id="webhooks-heading">Webhooks</h2>
        <p class="hint">The events of your projects, sent as they happen to a URL of yours, signed (Standard Webhooks).</p>
        <ul class="items" aria-labelledby="webhooks-heading">
          <ListState error={webhooks.error} loading={!webhooks.data} />
          {webhooks.data?.length === 0 ? <li class="empty">No webhook yet.</li> : null}
          {webhooks.data?.map((webhook) => (
            <WebhookRow key={webhook.id} webhook={webhook} reload={webhooks.reload} />
          ))}
        </ul>
      </section>
      <section aria-labelledby="new-webhook-heading">
        <h2 id="new-webhook-heading">New webhook</h2>
        <form id="webhook-form" class="webhook-form" noValidate onSubmit={create}>
          <WebhookFields prefix="new-webhook" />
          <FormError id="webhook-form-error" message={error} />
          <div class="actions">
            <button type="submit" disabled={busy}>
              Create webhook
            </button>
          </div>
        </form>
        {secret ? (
          <section key={secret} class="secret" aria-labelledby="webhook-secret-heading">
            <FocusedHeading id="webhook-secret-heading">Its signing secret</FocusedHeading>
            <p>Give it to your receiver now: it is shown this once.</p>
            <input type="text" readOnly aria-label="Signing secret" spellcheck={false} autoComplete="off" value={secret} class="mono" />
          </section>
        ) : null}
      </section>
    </>
  );
}

/** Settings, Notifications: how notifications are mailed (its operations are on their way into the API). */
export function NotificationsTab() {
  return (
    <section aria-labelledby="notifications-heading">
      <h2 id="notifications-heading">Notifications</h2>
      <p class="meta">This server cannot set how notifications are mailed yet.</p>
    </section>
  );
}

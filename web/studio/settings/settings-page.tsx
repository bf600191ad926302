/** /settings: Profile, Security, Access tokens, Player defaults, Notifications, Webhooks, Payments, Storage. (Being built.) */
export function SettingsPage() {
  return (
    <>
      <h1>Settings</h1>
      <p>This part of the studio is being built.</p>
    </>
  );
}

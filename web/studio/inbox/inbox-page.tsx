/** /inbox: every comment on the musician's projects, and files that arrived through a portal. (Being built.) */
export function InboxPage() {
  return (
    <>
      <h1>Inbox</h1>
      <p>This part of the studio is being built.</p>
    </>
  );
}

/** The count of open comments beside Inbox in the bar. (Being built.) */
export function InboxCount() {
  return null;
}

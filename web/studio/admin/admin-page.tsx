/** /admin, for administrators: people, invitations, quotas. (Being built.) */
export function AdminPage() {
  return (
    <>
      <h1>Administration</h1>
      <p>This part of the studio is being built.</p>
    </>
  );
}

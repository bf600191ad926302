/** /links: every player with its scope and options; /links/{playerid}: one player's listener insights. (Being built.) */
export function LinksPage() {
  return (
    <>
      <h1>Links</h1>
      <p>This part of the studio is being built.</p>
    </>
  );
}

export function LinkPage({ playerid }: { playerid: string }) {
  return (
    <>
      <h1>Link</h1>
      <p data-playerid={playerid}>This part of the studio is being built.</p>
    </>
  );
}

/** A project at /projects/{projectid}: its files, folders and stacks, uploads, organising, playing. (Being built.) */
export function ProjectPage({ projectid }: { projectid: string }) {
  return (
    <>
      <h1>Project</h1>
      <p data-projectid={projectid}>This part of the studio is being built.</p>
    </>
  );
}

/**
 * Migration 19: the account preference that turns off versions stacking
 * themselves (issue 21: "A preference turns auto-stacking off"). On by
 * default, for the accounts there are and those to come.
 */
export function autoStackSchema(): string {
  return `
ALTER TABLE users ADD COLUMN auto_stack INTEGER NOT NULL DEFAULT 1;
`;
}

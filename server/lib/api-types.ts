/** The spec's schemas, as the server uses them. Generated; see generated/schema.d.ts. */
import type { components } from '../../generated/schema.d.ts';

export type Schemas = components['schemas'];
export type Role = 'owner' | Schemas['CollaboratorRole'];

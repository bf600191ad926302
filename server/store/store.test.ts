import { storeConformance } from './store.conformance.ts';
import { backends } from '../testing/databases.ts';

for (const backend of backends) storeConformance(backend);

import type { Migration } from '../db.ts';
import { initialSchema } from './schema.ts';
import { audioPipelineSchema } from './jobs.ts';

export const sqliteMigrations: Migration[] = [
  { version: 1, name: 'initial schema', sql: initialSchema('INTEGER') },
  { version: 2, name: 'audio pipeline', sql: audioPipelineSchema('INTEGER') },
];

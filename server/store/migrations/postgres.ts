import type { Migration } from '../db.ts';
import { initialSchema } from './schema.ts';
import { audioPipelineSchema } from './jobs.ts';

export const postgresMigrations: Migration[] = [
  { version: 1, name: 'initial schema', sql: initialSchema('BIGINT') },
  { version: 2, name: 'audio pipeline', sql: audioPipelineSchema('BIGINT') },
];

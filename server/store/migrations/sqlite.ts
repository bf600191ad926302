import type { Migration } from '../db.ts';
import { initialSchema } from './schema.ts';

export const sqliteMigrations: Migration[] = [{ version: 1, name: 'initial schema', sql: initialSchema('INTEGER') }];

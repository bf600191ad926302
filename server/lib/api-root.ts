import type { Config } from '../config.ts';

/** The API root as clients see it: signed URLs and links start here. */
export const apiRoot = (config: Pick<Config, 'publicUrl'>) => `${config.publicUrl}/api/v1`;

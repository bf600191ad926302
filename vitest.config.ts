import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // One line per test, with its describe path and the store it ran on (sqlite, postgres, or the contract target).
    reporters: ['./scripts/vitest-store-reporter.ts'],
    projects: [
      {
        test: {
          name: 'server',
          include: ['server/**/*.test.ts', 'bench/**/*.test.ts', 'web/**/*.test.ts', 'scripts/**/*.test.ts', 'mock/**/*.test.ts', 'examples/**/*.test.ts', 'deploy/**/*.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          // Stops radosgw at the end if an S3 test of this run started it (server/testing/s3.ts).
          globalSetup: ['server/testing/radosgw-global-setup.ts'],
        },
      },
      {
        test: {
          name: 'contract',
          include: ['contract-tests/**/*.test.ts'],
          globalSetup: ['contract-tests/support/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});

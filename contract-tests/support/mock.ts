/**
 * Runs the partner mock (mock/mock-server.ts) in this process for the
 * contract suite, at the address partners use: http://127.0.0.1:4010/api/v1.
 * When port 4010 is taken (a mock a developer left running), it takes a free
 * port instead and says so.
 */
import { startMock, type RunningMock } from '../../mock/mock-server.ts';

export const mockPort = 4010;

export async function startContractMock(): Promise<RunningMock> {
  try {
    return await startMock({ port: mockPort, host: '127.0.0.1' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    const mock = await startMock({ port: 0, host: '127.0.0.1' });
    console.log(`Port ${mockPort} is in use; the contract suite's mock listens at ${mock.apiUrl} instead.`);
    return mock;
  }
}

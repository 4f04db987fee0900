import { ApiError } from '#platform';
import { ProjectDirectory } from '#keys';
import { CustomerRailStatuses } from '#rails';
import { createMediumContext, unique, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

/**
 * What other contexts ask the keys and rails contexts through their indexes, on the test
 * database: whether a project exists (and its row lock, which serialises writers of a project's
 * settings), and customers' rail status.
 */
describe('medium: ProjectDirectory and CustomerRailStatuses', () => {
  let m: MediumContext;
  let projects: ProjectDirectory;

  beforeAll(async () => {
    m = await createMediumContext();
    projects = m.get(ProjectDirectory);
  });
  afterAll(() => m?.close());

  it('a project exists once written; an unknown one is 404 resource_missing naming it', async () => {
    const projectId = await m.newProject();
    expect(await projects.exists(projectId)).toBe(true);
    await expect(projects.assertExists(projectId)).resolves.toBeUndefined();
    const unknown = unique('proj_unknown');
    expect(await projects.exists(unknown)).toBe(false);
    const refusal = await projects.assertExists(unknown).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ status: 404, code: 'resource_missing', message: `No such project: ${unknown}` });
  });

  it("with lock, a transaction holds the project's row: a second locked check waits until the first commits", async () => {
    const projectId = await m.newProject();
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstLocked!: () => void;
    const locked = new Promise<void>((resolve) => (firstLocked = resolve));
    const first = m.sql.transaction(async () => {
      await projects.assertExists(projectId, { lock: true });
      firstLocked();
      await firstHolds;
      order.push('first commits');
    });
    await locked;
    const second = m.sql.transaction(async () => {
      await projects.assertExists(projectId, { lock: true });
      order.push('second locked');
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(order).toEqual([]);
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['first commits', 'second locked']);
  });

  it("a customer without a rail record reads as 'none' in the rails' answer", async () => {
    const scope = testScope(await m.newProject(), 'sandbox');
    const customerId = await m.newCustomer(scope);
    const status = await m.get(CustomerRailStatuses).of(scope, [customerId], m.clock.nowMs());
    expect(status).toEqual(new Map([[customerId, 'none']]));
    const otherEnv = await m.get(CustomerRailStatuses).of(testScope(scope.projectId, 'production'), [customerId], m.clock.nowMs());
    expect(otherEnv).toEqual(new Map([[customerId, 'none']]));
  });
});

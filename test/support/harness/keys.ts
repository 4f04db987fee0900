import { createProjectWithApp, type ProjectFixture } from '../fixtures.js';
import { createTestApp, type TestApp } from '../test-app.js';

export const SEVEN_DAYS = 7 * 24 * 3600;

/** One app per spec file (registers its own beforeAll/afterAll). */
export function keysHarness() {
  let t: TestApp;
  let web: ProjectFixture;

  beforeAll(async () => {
    t = await createTestApp();
    web = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());
  return {
    get t() {
      return t;
    },
    get web() {
      return web;
    },
  };
}

import { request, type FullConfig } from '@playwright/test';
import { ADMIN_STATE, ADMIN_TOKEN } from './credentials';

/**
 * Signs in once with the admin token (POST /api/v1/session, the sign-in form's own request) and keeps
 * the HttpOnly session cookie in ADMIN_STATE, which every spec's browser starts from. The sign-in page
 * itself is tested in auth.spec.ts, in contexts of its own.
 */
export default async function globalSetup(config: FullConfig) {
  const baseURL = config.projects[0]?.use.baseURL;
  const api = await request.newContext({ baseURL });
  const res = await api.post('/api/v1/session', { data: { token: ADMIN_TOKEN } });
  if (res.status() !== 200) throw new Error(`global setup: sign-in answered ${res.status()}: ${await res.text()}`);
  await api.storageState({ path: ADMIN_STATE });
  await api.dispose();
}

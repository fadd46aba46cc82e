import { expect, type APIRequestContext } from './fixtures';

// Helpers the specs share: run.sh's own agent, and a run posted through the API and waited for.

/** run.sh's agent's machine (online; not a spec's "second" agent), once it is online. */
export async function localMachine(request: APIRequestContext): Promise<{ id: string; name: string }> {
  let m: { id: string; name: string } | undefined;
  await expect
    .poll(
      async () => {
        const machines = (await (await request.get('/api/v1/machines')).json()) as { id: string; name: string; online: boolean }[];
        m = machines.find((x) => x.online && x.name !== 'second');
        return m?.id ?? '';
      },
      { timeout: 30_000 },
    )
    .not.toBe('');
  return m!;
}

/** Posts one run (a POST /runs body with machine_id) and checks the server created it; its id. */
export async function postRun(request: APIRequestContext, data: Record<string, unknown>): Promise<string> {
  const created = await request.post('/api/v1/runs', { data });
  expect(created.status(), await created.text()).toBe(201);
  return ((await created.json()) as { id: string }).id;
}

/** Waits until run `id` has `status` (as the API says). */
export async function runReaches(request: APIRequestContext, id: string, status: string, timeout: number): Promise<void> {
  // Every 250 ms (not the default's 1 s once past the first probes): the suite waits on many short runs.
  await expect.poll(async () => ((await (await request.get(`/api/v1/runs/${id}`)).json()) as { status: string }).status, { timeout, intervals: [250] }).toBe(status);
}

/** Posts a quick run of `items` on `machine` and waits until it has succeeded; its id. */
export async function runToSuccess(request: APIRequestContext, machine: string, items: Record<string, unknown>[], timeout = 90_000): Promise<string> {
  const id = await postRun(request, { machine_id: machine, profile: 'quick', repetitions: 2, min_time_s: 0.02, items });
  await runReaches(request, id, 'succeeded', timeout);
  return id;
}

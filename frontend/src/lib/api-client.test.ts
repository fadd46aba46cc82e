import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  CHUNK_LOAD_MESSAGE,
  apiFetch,
  errorMessage,
  isChunkLoadError,
  errorFromNetwork,
  errorFromResponse,
  fieldErrorsFromDetail,
  formatLoc,
  messageFromDetail,
  setUnauthorizedHandler,
} from './api-client';

describe('formatLoc', () => {
  it('drops the body prefix and indexes list positions', () => {
    expect(formatLoc(['body', 'items', 0, 'params', 'placement'])).toBe('items[0].params.placement');
    expect(formatLoc(['body', 'repetitions'])).toBe('repetitions');
    expect(formatLoc(['query', 'limit'])).toBe('limit');
    expect(formatLoc('nope')).toBe('');
  });
});

describe('messageFromDetail', () => {
  it('keeps a string detail', () => {
    expect(messageFromDetail('run not found')).toBe('run not found');
  });

  it('names the field of each validation error', () => {
    const detail = [
      { loc: ['body', 'repetitions'], msg: 'Input should be less than or equal to 1000', type: 'less_than_equal' },
      { loc: ['body', 'items', 1, 'kernel'], msg: 'unknown kernel no.such_kernel', type: 'value_error' },
    ];
    expect(messageFromDetail(detail)).toBe(
      'repetitions: Input should be less than or equal to 1000; items[1].kernel: unknown kernel no.such_kernel',
    );
    expect(fieldErrorsFromDetail(detail)).toEqual([
      { field: 'repetitions', message: 'Input should be less than or equal to 1000' },
      { field: 'items[1].kernel', message: 'unknown kernel no.such_kernel' },
    ]);
  });

  it('copes with a loc-less error, an object and nothing', () => {
    expect(messageFromDetail([{ msg: 'JSON decode error' }])).toBe('JSON decode error');
    expect(messageFromDetail({ message: 'busy' })).toBe('busy');
    expect(messageFromDetail(undefined)).toBeNull();
    expect(messageFromDetail('  ')).toBeNull();
    expect(messageFromDetail([])).toBeNull();
  });
});

describe('errorFromResponse', () => {
  it('reads FastAPI detail', () => {
    const e = errorFromResponse(404, '{"detail":"run abc not found"}');
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(404);
    expect(e.isNotFound).toBe(true);
    expect(e.message).toBe('run abc not found');
  });

  it('keeps the field errors of a 422', () => {
    const body = JSON.stringify({
      detail: [{ loc: ['body', 'items', 0, 'params', 'placement'], msg: "must be one of same_core", type: 'x' }],
    });
    const e = errorFromResponse(422, body);
    expect(e.message).toBe('items[0].params.placement: must be one of same_core');
    expect(e.fieldErrors).toEqual([{ field: 'items[0].params.placement', message: 'must be one of same_core' }]);
  });

  it('falls back to the status for bodies that are not JSON', () => {
    expect(errorFromResponse(502, '<html>Bad Gateway</html>').message).toBe('Bad gateway (HTTP 502)');
    expect(errorFromResponse(418, '').message).toBe('Request failed (HTTP 418)');
  });
});

describe('errorFromNetwork', () => {
  it('says the server cannot be reached', () => {
    const e = errorFromNetwork(new TypeError('Failed to fetch'), '/api/v1/machines');
    expect(e.status).toBe(0);
    expect(e.message).toBe('Cannot reach the ctxbench server for /api/v1/machines (Failed to fetch). Is it running?');
  });
});

describe('apiFetch', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    setUnauthorizedHandler(null);
  });

  it('sends the session cookie on our own origin only', async () => {
    const fetchMock = vi.fn(async () => new Response('[]', { status: 200 }));
    vi.stubGlobal('fetch', fetchMock);
    await apiFetch('/machines');
    const [, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(init.credentials).toBe('same-origin');
  });

  it('hands a 401 to the registered handler and still throws it', async () => {
    const seen: ApiError[] = [];
    setUnauthorizedHandler((e) => seen.push(e));
    vi.stubGlobal('fetch', async () => new Response('{"detail":"session expired: sign in again"}', { status: 401 }));
    await expect(apiFetch('/machines')).rejects.toMatchObject({ status: 401, isUnauthorized: true, message: 'session expired: sign in again' });
    expect(seen.map((e) => e.message)).toEqual(['session expired: sign in again']);
  });

  it('leaves a 401 to the caller that asks so (the sign-in form), and other errors alone', async () => {
    const seen: ApiError[] = [];
    setUnauthorizedHandler((e) => seen.push(e));
    vi.stubGlobal('fetch', async () => new Response('{"detail":"unknown token"}', { status: 401 }));
    await expect(apiFetch('/session', { method: 'POST', body: '{}', authRedirect: false })).rejects.toMatchObject({ message: 'unknown token' });
    vi.stubGlobal('fetch', async () => new Response('{"detail":"admin only"}', { status: 403 }));
    await expect(apiFetch('/tokens')).rejects.toMatchObject({ status: 403, isUnauthorized: false });
    expect(seen).toEqual([]);
  });

  it('never passes authRedirect on to fetch', async () => {
    const fetchMock = vi.fn(async () => new Response(null, { status: 204 }));
    vi.stubGlobal('fetch', fetchMock);
    await expect(apiFetch('/session', { method: 'DELETE', authRedirect: false })).resolves.toBeUndefined();
    const [, init] = fetchMock.mock.calls[0] as unknown as [string, Record<string, unknown>];
    expect(init).not.toHaveProperty('authRedirect');
    expect(init.method).toBe('DELETE');
  });

  it('returns parsed JSON and sends JSON bodies', async () => {
    const fetchMock = vi.fn(async () => new Response('{"id":"r1"}', { status: 201 }));
    vi.stubGlobal('fetch', fetchMock);
    await expect(apiFetch('/runs', { method: 'POST', body: '{}' })).resolves.toEqual({ id: 'r1' });
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/api/v1/runs');
    expect(new Headers(init.headers).get('Content-Type')).toBe('application/json');
  });

  it('throws ApiError with the server message', async () => {
    vi.stubGlobal('fetch', async () => new Response('{"detail":"unknown machine m9"}', { status: 404 }));
    await expect(apiFetch('/machines/m9')).rejects.toMatchObject({ status: 404, message: 'unknown machine m9' });
  });

  it('throws a readable ApiError when the network fails', async () => {
    vi.stubGlobal('fetch', async () => {
      throw new TypeError('Failed to fetch');
    });
    await expect(apiFetch('/machines')).rejects.toMatchObject({ status: 0, name: 'ApiError' });
  });
});

describe('errorMessage of a page whose code could not be fetched', () => {
  it('says the server did not answer, in words, for each browser', () => {
    for (const raw of [
      'Failed to fetch dynamically imported module: http://127.0.0.1:8080/assets/machines-AbC123.js',
      'error loading dynamically imported module: http://127.0.0.1:8080/assets/run-x.js',
      'Importing a module script failed.',
    ]) {
      const err = new TypeError(raw);
      expect(isChunkLoadError(err)).toBe(true);
      expect(errorMessage(err)).toBe(CHUNK_LOAD_MESSAGE);
      expect(errorMessage(err)).not.toMatch(/dynamically imported/);
    }
  });
  it('leaves other errors as they are', () => {
    expect(isChunkLoadError(new TypeError('x is undefined'))).toBe(false);
    expect(errorMessage(new TypeError('x is undefined'))).toBe('x is undefined');
  });
});

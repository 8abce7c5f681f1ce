/**
 * The suite's HTTP client: the stack's API over a real socket with its bearer token, as any client would call it.
 * Under faults the API itself may answer a throttle or a 5xx (its store calls fail too, and a read of a step's
 * details makes several): a client retries those, so the suite does, patiently (15 tries, backoff up to 400 ms),
 * and reports what still failed.
 */
export interface ApiAnswer {
  readonly status: number;
  readonly json: unknown;
}

export interface ApiClient {
  call(method: string, path: string, body?: unknown, headers?: Readonly<Record<string, string>>): Promise<ApiAnswer>;
  /** GET that must answer 200 (after retries); throws with the answer otherwise. */
  get<T>(path: string): Promise<T>;
}

const RETRIED = (status: number) => status === 429 || status >= 500;

export function createApiClient(url: string, token: string, options: { attempts?: number } = {}): ApiClient {
  const attempts = options.attempts ?? 15;
  const call: ApiClient['call'] = async (method, path, body, headers = {}) => {
    let last: ApiAnswer | undefined;
    let failure: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(400, 20 * 2 ** attempt)));
      try {
        const response = await fetch(`${url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await response.text();
        last = { status: response.status, json: text ? (JSON.parse(text) as unknown) : undefined };
        if (!RETRIED(response.status)) return last;
      } catch (error) {
        failure = error;
      }
    }
    if (last) return last;
    throw new Error(`${method} ${path}: no answer after ${attempts} tries: ${String(failure)}`);
  };
  return {
    call,
    async get<T>(path: string) {
      const answer = await call('GET', path);
      if (answer.status !== 200)
        throw new Error(`GET ${path} answered ${answer.status}: ${JSON.stringify(answer.json)}`);
      return answer.json as T;
    },
  };
}

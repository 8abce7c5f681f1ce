/**
 * The expression worker, a child process of the engine: evaluates the requests the pool (./worker-evaluator.ts)
 * sends, one at a time, within the limits it was started with (its first argument, JSON), and answers each with
 * its outcomes. It says `ready` once loaded, so the pool starts a request's clock only when the worker can run it,
 * and it ends with the engine: a closed channel means the parent is gone.
 */
import { type EvaluationRequest, type ExpressionLimits, evaluateRequest } from '../../plan/expression-limits.ts';

export interface WorkerRequest {
  readonly id: number;
  readonly request: EvaluationRequest;
}

const send = process.send?.bind(process);
if (send === undefined) throw new Error('the expression worker runs as a child process with an IPC channel');
const limits = JSON.parse(process.argv[2] ?? '{}') as ExpressionLimits;

process.on('message', (message: WorkerRequest) => {
  void evaluateRequest(message.request, limits).then((outcomes) => send({ id: message.id, outcomes }));
});
process.on('disconnect', () => process.exit(0));
send({ ready: true });

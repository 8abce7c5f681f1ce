/**
 * `capability.call`: faults on the capability bindings of the embedded composition (a wrapper of the registry, so the
 * step runner sees them exactly as a binding's own failures). `error`: a transient failure (503, retryable).
 * `timeout`: no answer in time (retryable). A capability without side effects, or an idempotent one, may have acted
 * before it timed out (seeded); a mutating one is cut off before it acts, since no caller can make a side effect whose
 * answer was lost happen exactly once unless the outside system dedupes on the idempotency key it is sent.
 */
import type { CapabilityBinding, CapabilityRegistry } from '../../../shared/ports/capabilities.ts';
import { capabilityTimeout, capabilityUnavailable } from './aws-errors.ts';
import type { FaultInjector } from './injector.ts';

function faultyBinding(faults: FaultInjector, target: string, binding: CapabilityBinding): CapabilityBinding {
  return {
    kind: binding.kind,
    ...(binding.close === undefined ? {} : { close: () => binding.close?.() ?? Promise.resolve() }),
    async invoke(call) {
      const rule = faults.draw('capability.call');
      if (rule === undefined) return binding.invoke(call);
      if (rule.fault === 'error') throw capabilityUnavailable(target);
      const acted = faults.detail('capability.call') >= 0.5 && call.capability.sideEffect !== 'mutating';
      if (acted) await binding.invoke(call).catch(() => undefined);
      throw capabilityTimeout(target);
    },
  };
}

export function faultyRegistry(faults: FaultInjector, registry: CapabilityRegistry): CapabilityRegistry {
  if (!faults.covers('capability.call')) return registry;
  return {
    binding(target) {
      const binding = registry.binding(target);
      return binding === undefined ? undefined : faultyBinding(faults, target, binding);
    },
  };
}

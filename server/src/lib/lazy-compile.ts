/**
 * Route schemas compiled on first use instead of at start. Fastify compiles every route's validators (Ajv)
 * and response serializers (fast-json-stringify) when the app becomes ready: for ~140 routes that was
 * ~0.7 s of CPU at each start (bench/startup.ts, CPU profile), most of it for routes a given process may
 * never serve. Each route now pays a few milliseconds on its first request instead.
 */

/** A compiled validator or serializer: a function, possibly with Ajv's `errors` and `schemaEnv` properties. */
type Compiled = ((...args: any[]) => any) & { errors?: unknown; schemaEnv?: unknown };

/**
 * Wrap a Fastify schema compiler (`setValidatorCompiler`'s function, or the serializer compiler a
 * `compilersFactory.buildSerializer` returns) so that each route's function is compiled on its first call.
 * The wrapper forwards Ajv's `errors` (read by Fastify after a failed validation) and `schemaEnv` (read
 * before the call to decide whether to pass the parent object, which compiles the schema then).
 */
export function lazyCompiler<R, F extends Compiled>(compile: (route: R) => F): (route: R) => F {
  return (route) => {
    let fn: F | undefined;
    const get = () => (fn ??= compile(route));
    const wrapper = function (this: unknown, ...args: unknown[]) {
      return get().apply(this, args);
    } as F;
    Object.defineProperty(wrapper, 'errors', { get: () => fn?.errors, configurable: true });
    Object.defineProperty(wrapper, 'schemaEnv', { get: () => get().schemaEnv, configurable: true });
    return wrapper;
  };
}

/**
 * A route's hooks of one kind as a list: Fastify's route options hold none, one handler or an array of them. Used
 * where the pipeline adds its own hook to a route's (http/authorize.ts, http/throttle.ts). Pure.
 */
export const hooksOf = <H>(hooks: H | H[] | undefined): H[] => (Array.isArray(hooks) ? hooks : hooks ? [hooks] : []);
